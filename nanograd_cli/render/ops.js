// The ops of nanograd_cli/ops.py in JavaScript, for the live page. Each op's function has the
// op's name (render/ops_js.py's FORWARD names the others), with ops.py's IEEE results and
// kinks; the page's code calls them, with the derivatives written from the ops table's
// formulas. JavaScript's `/` already gives IEEE results for a zero divisor, as `divide` does.

// What JavaScript's Math has as C (and so Python) has it.
const exp = Math.exp, expm1 = Math.expm1, atan = Math.atan, atan2 = Math.atan2;
const sinh = Math.sinh, cosh = Math.cosh, tanh = Math.tanh, abs = Math.abs, hypot = Math.hypot;

const divide = (a, b) => a / b;
function power(a, b) {
  // C's pow (and so Python's) has 1**b = 1 and (-1)**±inf = 1 where JavaScript has nan
  if (a === 1 || (a === -1 && (b === Infinity || b === -Infinity))) return 1;
  const y = Math.pow(a, b);
  // a negative base to a fractional power: Python's complex result is nan, but its overflow
  // is caught as inf
  if (y !== y && a < 0 && a > -Infinity && Math.pow(-a, b) === Infinity) return Infinity;
  return y;
}
const copysign = (m, s) => (s < 0 || Object.is(s, -0) ? -Math.abs(m) : Math.abs(m));
const log = (x) => (x > 0 ? Math.log(x) : x === 0 ? -Infinity : NaN);
const log2 = (x) => (x > 0 ? Math.log2(x) : x === 0 ? -Infinity : NaN);
const log10 = (x) => (x > 0 ? Math.log10(x) : x === 0 ? -Infinity : NaN);
const log1p = (x) => (x > -1 ? Math.log1p(x) : x === -1 ? -Infinity : NaN);
const logBase = (x, base) => divide(log(x), log(base));
const sqrt = (x) => (x >= 0 ? Math.sqrt(x) : NaN);
const unit = (f) => (x) => (-1 <= x && x <= 1 ? f(x) : NaN);
const asin = unit(Math.asin), acos = unit(Math.acos);
const periodic = (f) => (x) => (x - x === 0 ? f(x) : NaN);
const sin = periodic(Math.sin), cos = periodic(Math.cos), tan = periodic(Math.tan);
function sigmoid(x) {
  if (x >= 0) return 1 / (1 + Math.exp(-x));
  const z = Math.exp(x);
  return z / (1 + z);
}
const softplus = (x) => (x > 0 ? x + Math.log1p(Math.exp(-x)) : Math.log1p(Math.exp(x)));
const relu = (x) => (x > 0 ? x : 0);
const step = (x) => (x > 0 ? 1 : x === x ? 0 : NaN);
const sign = (x) => (x > 0 ? 1 : x < 0 ? -1 : x === x ? 0 : NaN);
function powlog(a, b) {
  if (a > 0) return power(a, b) * Math.log(a);
  return a === 0 && b >= 0 ? 0 : NaN;
}
function sechSquared(x) {
  const e = Math.exp(-2 * Math.abs(x));
  const r = 1 / (1 + e);
  return 4 * e * r * r;
}
const max = (a, b) => (a >= b ? a : b > a ? b : NaN);
const min = (a, b) => (a <= b ? a : b < a ? b : NaN);
function clamp(x, lo, hi) {
  if (x !== x || lo !== lo || hi !== hi) return NaN;
  const m = lo > x ? lo : x; // Python's max and min keep the first of equals (0.0, -0.0)
  return hi < m ? hi : m;
}
// a % b as Python has it: the sign of b, and a zero of that sign (JavaScript's % is C's fmod)
function mod(a, b) {
  const r = a % b;
  if (r === 0) return copysign(0, b);
  return r < 0 !== b < 0 ? r + b : r;
}
const less = (a, b) => (a < b ? 1 : 0), lessEqual = (a, b) => (a <= b ? 1 : 0);
const greater = (a, b) => (a > b ? 1 : 0), greaterEqual = (a, b) => (a >= b ? 1 : 0);
const equal = (a, b) => (a === b ? 1 : 0), notEqual = (a, b) => (a !== b ? 1 : 0);
const where = (c, a, b) => (c !== 0 ? a : b); // nan is not 0
const integral = (f) => (x) => (x - x === 0 ? copysign(f(x), x) : x);
function halfEven(x) {
  let r = Math.round(x); // halves up; Python's round takes halves to even
  if (r - x === 0.5 && r % 2 !== 0) r -= 1;
  return r;
}
const floor = integral(Math.floor), ceil = integral(Math.ceil), round = integral(halfEven);

// erf and erfc: C's are not in JavaScript. A series for |x| < 1.5, a continued fraction for
// erfc beyond (as CPython's own fallback): within a few units in the last place of C's.
const SQRT_PI = Math.sqrt(Math.PI);
function erfSeries(x) {
  const x2 = x * x;
  let acc = 0, fk = 25.5;
  for (let i = 0; i < 25; i++) { acc = 2 + (x2 * acc) / fk; fk -= 1; }
  return (acc * x * Math.exp(-x2)) / SQRT_PI;
}
function erfcFraction(x) {
  if (x >= 30) return 0;
  const x2 = x * x;
  let a = 0, da = 0.5, p = 1, pLast = 0, q = da + x2, qLast = 1;
  for (let i = 0; i < 50; i++) {
    a += da; da += 2;
    const b = da + x2;
    [p, pLast] = [b * p - a * pLast, p];
    [q, qLast] = [b * q - a * qLast, q];
  }
  return ((p / q) * x * Math.exp(-x2)) / SQRT_PI;
}
function erf(x) {
  if (x !== x) return x;
  if (Math.abs(x) < 1.5) return erfSeries(x);
  const c = erfcFraction(Math.abs(x));
  return x > 0 ? 1 - c : c - 1;
}
function erfc(x) {
  if (x !== x) return x;
  if (Math.abs(x) < 1.5) return 1 - erfSeries(x);
  const c = erfcFraction(Math.abs(x));
  return x > 0 ? c : 2 - c;
}
