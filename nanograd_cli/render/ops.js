// The ops of nanograd_cli/_ops.py in JavaScript, for the live page. Each op's function has the
// op's name (render/_ops_js.py's FORWARD names the others), with _ops.py's IEEE results and
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

// The inverse hyperbolic functions, the cube root, and the reciprocal trigonometric and
// hyperbolic functions, as nanograd_cli/_ops.py has them (sech and csch keep their tiny values
// where cosh and sinh overflow).
const asinh = Math.asinh, acosh = Math.acosh, atanh = Math.atanh, cbrt = Math.cbrt;
const sec = (x) => 1 / cos(x), csc = (x) => 1 / sin(x), cot = (x) => 1 / tan(x);
const sech = (x) => (Math.abs(x) < 710 ? 1 / Math.cosh(x) : 2 * Math.exp(-Math.abs(x)));
const csch = (x) => (Math.abs(x) < 710 ? 1 / Math.sinh(x) : copysign(2 * Math.exp(-Math.abs(x)), x));
const coth = (x) => 1 / Math.tanh(x);
function logaddexp(a, b) {
  if (a === b) return a + Math.LN2; // the infinities too
  if (a !== a || b !== b) return NaN;
  return Math.max(a, b) + Math.log1p(Math.exp(-Math.abs(a - b)));
}

// The special functions of nanograd_cli/_special.py, by the same methods.
const isInteger = (x) => x === Math.floor(x);
function polynomial(coefficients, x) {
  let total = 0;
  for (let k = coefficients.length - 1; k >= 0; k--) total = total * x + coefficients[k];
  return total;
}
function sinpi(x) {
  if (x - x !== 0) return NaN;
  let r = x % 2, sign = 1; // exact, as fmod
  if (r < 0) { r = -r; sign = -1; }
  if (r > 1) { r -= 1; sign = -sign; }
  if (r > 0.5) r = 1 - r;
  return r <= 0.25 ? sign * Math.sin(Math.PI * r) : sign * Math.cos(Math.PI * (0.5 - r));
}
const cospi = (x) => (x - x !== 0 ? NaN : sinpi(0.5 - (Math.abs(x) % 2)));
function sinc(x) {
  if (x === 0) return 1;
  if (x - x !== 0) return x === x ? 0 : NaN;
  return sinpi(x) / (Math.PI * x);
}
function sincSeries(order) {
  const terms = [];
  let factorial = 1; // (2k + 1)!
  for (let k = 1; k < 20; k++) {
    factorial *= 2 * k * (2 * k + 1);
    let falling = 1; // (2k)!/(2k - order)!
    for (let j = 0; j < order; j++) falling *= 2 * k - j;
    terms.push(((k % 2 ? -1 : 1) * falling) / factorial);
  }
  return terms;
}
const SINC1 = sincSeries(1);
function dsinc(x) {
  if (x - x !== 0) return x === x ? 0 : NaN;
  if (Math.abs(x) < 0.5) {
    const y = Math.PI * x;
    return Math.PI * y * polynomial(SINC1, y * y);
  }
  return (cospi(x) - sinc(x)) / x;
}
const EULER = 0.5772156649015329;
const ZETA_M1 = [
  0.6449340668482264, 0.2020569031595943, 0.08232323371113819, 0.03692775514336993,
  0.01734306198444914, 0.008349277381922827, 0.00407735619794434, 0.0020083928260822143,
  0.0009945751278180853, 0.0004941886041194645, 0.0002460865533080483,
  0.00012271334757848915, 6.124813505870483e-05, 3.058823630702049e-05,
  1.528225940865187e-05, 7.637197637899763e-06, 3.81729326499984e-06, 1.908212716553939e-06,
  9.539620338727962e-07, 4.769329867878064e-07, 2.38450502727733e-07,
  1.1921992596531106e-07, 5.960818905125948e-08, 2.980350351465228e-08,
  1.4901554828365043e-08, 7.45071178983543e-09, 3.725334024788457e-09,
  1.862659723513049e-09, 9.313274324196682e-10, 4.656629065033784e-10,
  2.3283118336765053e-10, 1.164155017270052e-10, 5.820772087902701e-11,
  2.9103850444971e-11, 1.4551921891041985e-11, 7.275959835057482e-12,
  3.637979547378651e-12, 1.818989650307066e-12,
];
const BERNOULLI = [
  0.16666666666666666, -0.03333333333333333, 0.023809523809523808, -0.03333333333333333,
  0.07575757575757576, -0.2531135531135531, 1.1666666666666667, -7.092156862745098,
  54.971177944862156, -529.1242424242424, 6192.123188405797, -86580.25311355312,
];
function lgammaNear2(z) {
  let total = 0;
  for (let k = ZETA_M1.length + 1; k > 1; k--) total = total * z + ((k % 2 ? -1 : 1) * ZETA_M1[k - 2]) / k;
  return z * (1 - EULER + z * total);
}
function lgammaNear1(z) {
  let total = 0;
  for (let k = 60; k > 1; k--) {
    const zeta = 1 + (k - 2 < ZETA_M1.length ? ZETA_M1[k - 2] : 0);
    total = total * z + ((k % 2 ? -1 : 1) * zeta) / k;
  }
  return z * (-EULER + z * total);
}
function lgamma(x) {
  if (x !== x) return NaN;
  if (x === Infinity || x === -Infinity) return Infinity;
  if (x <= 0) {
    if (isInteger(x)) return Infinity;
    return Math.log(Math.PI) - Math.log(Math.abs(sinpi(x))) - lgamma(1 - x);
  }
  if (x >= 10) {
    const inverse = 1 / x, square = inverse * inverse;
    let series = 0;
    for (let k = BERNOULLI.length; k > 0; k--) series = series * square + BERNOULLI[k - 1] / (2 * k * (2 * k - 1));
    return (x - 0.5) * Math.log(x) - x + 0.5 * Math.log(2 * Math.PI) + series * inverse;
  }
  if (x < 0.5) return lgammaNear1(x) - Math.log(x);
  if (x <= 1.5) return lgammaNear1(x - 1) + 0;
  let product = 1;
  while (x > 2.5) { x -= 1; product *= x; }
  return lgammaNear2(x - 2) + (product !== 1 ? Math.log(product) : 0);
}
// Lanczos' approximation (g = 7, 9 terms), to about 1e-15; the reflection below 1/2
const LANCZOS = [
  0.99999999999980993, 676.5203681218851, -1259.1392167224028, 771.32342877765313,
  -176.61502916214059, 12.507343278686905, -0.13857109526572012, 9.9843695780195716e-6,
  1.5056327351493116e-7,
];
function gamma(x) {
  if (x === 0) return 1 / x;
  if (x !== x || x === -Infinity || (x < 0 && isInteger(x))) return NaN;
  if (x === Infinity) return Infinity;
  if (x < 0.5) return Math.PI / (sinpi(x) * gamma(1 - x));
  if (x > 172) return Infinity;
  x -= 1;
  let a = LANCZOS[0];
  const t = x + 7.5;
  for (let i = 1; i < 9; i++) a += LANCZOS[i] / (x + i);
  const half = Math.pow(t, (x + 0.5) / 2); // t**(x + 1/2) in two, so that it cannot overflow
  return Math.sqrt(2 * Math.PI) * ((half * Math.exp(-t)) * half) * a;
}
const DIGAMMA_ZERO = [1.4616321449683622, 9.549995429965697e-17];
const DIGAMMA_AT_ZERO = [
  0.9676722454476212, -0.4427631689835921, 0.258499760955651, -0.16394270544240652,
  0.10782405069126237, -0.07219956125645471, 0.04880428816414311, -0.03316112647484736,
  0.022597648232218104, -0.01542476590494896, 0.010538791616612175, -0.007204534386356869,
  0.004926781395729853, -0.003369801655439328, 0.002305126326734928, -0.0015769367714301972,
  0.0010788252019162967, -0.0007380709389960052, 0.000504953265834602,
  -0.0003454680251063077, 0.00023635601564027053, -0.00016170622091974803,
  0.0001106337276874741, -7.569179582195066e-05, 5.178575795222081e-05,
  -3.5430070947659604e-05, 2.424006611860132e-05, -1.6584242271854135e-05,
  1.134638458466385e-05, -7.762817668462094e-06, 5.3110609208898636e-06,
  -3.6336507898010456e-06, 2.486022733129538e-06, -1.7008538854332607e-06,
  1.1636675363548843e-06, -7.96142543124197e-07, 5.446941930669446e-07,
  -3.7266161283438227e-07, 2.549626552021554e-07, -1.7443695117727745e-07,
];
const cotpi = (x) => cospi(x) / sinpi(x);
const digammaNearZero = (h) => h * polynomial(DIGAMMA_AT_ZERO, h);
function digamma(x) {
  if (x !== x || x === -Infinity) return NaN;
  if (x === Infinity) return Infinity;
  if (x <= 0) {
    if (x === 0) return -1 / x;
    if (isInteger(x)) return NaN;
    return digamma(1 - x) - Math.PI * cotpi(x);
  }
  const [zero, low] = DIGAMMA_ZERO;
  if (x < 1) return digammaNearZero(x - (zero - 1) - low) - 1 / x;
  if (x <= 2) return digammaNearZero(x - zero - low);
  if (x >= 10) {
    const inverse = 1 / x, square = inverse * inverse;
    let series = 0;
    for (let k = 8; k > 0; k--) series = series * square + BERNOULLI[k - 1] / (2 * k);
    return Math.log(x) - 0.5 * inverse - series * square;
  }
  let total = 0;
  while (x > 2) { x -= 1; total += 1 / x; }
  return digammaNearZero(x - zero - low) + total;
}
function factorial(n) {
  let f = 1;
  for (let k = 2; k <= n; k++) f *= k;
  return f;
}
function cotDerivative(n) {
  // the coefficients of P with d^n/du^n cot(u) = P(cot(u)): P0 = t, P(k+1) = -(1 + t^2) P(k)'
  let p = [0, 1];
  for (let step = 0; step < n; step++) {
    const derivative = p.slice(1).map((c, k) => (k + 1) * c);
    const next = new Array(derivative.length + 2).fill(0);
    derivative.forEach((c, k) => { next[k] -= c; next[k + 2] -= c; });
    p = next;
  }
  return p;
}
const inversePower = (x, k) => (x === 0 ? (k % 2 ? copysign(Infinity, x) : Infinity) : Math.pow(x, -k));
function polygamma(n, x) {
  if (!(n >= 0 && n - n === 0 && isInteger(n))) return NaN;
  if (n === 0) return digamma(x);
  if (x !== x || x === -Infinity) return NaN;
  const sign = n % 2 ? 1 : -1;
  if (x === Infinity) return sign * 0;
  if (x <= 0 && isInteger(x) && x !== 0) return n % 2 ? Infinity : NaN;
  if (n > 100) return x >= 0 ? polygammaOfHighOrder(n, x) : NaN;
  if (x < 0) return (n % 2 ? -1 : 1) * polygamma(n, 1 - x) - Math.pow(Math.PI, n + 1) * polynomial(cotDerivative(n), cotpi(x));
  const large = 10 + n;
  let total = 0;
  while (x < large) { total += inversePower(x, n + 1); x += 1; }
  const inverse = 1 / x, square = inverse * inverse;
  let series = 0;
  for (let k = BERNOULLI.length; k > 0; k--) {
    series = series * square + BERNOULLI[k - 1] * (factorial(2 * k + n - 1) / factorial(2 * k));
  }
  const asymptotic = inversePower(x, n) * (factorial(n - 1) + 0.5 * factorial(n) * inverse + series * square);
  return sign * (asymptotic + factorial(n) * total);
}
function polygammaOfHighOrder(n, x) {
  const sign = n % 2 ? 1 : -1;
  // 1/x**(n + 1) at x = 0, its sign from n's parity: n + 1 rounds to n past 2**53
  if (x === 0) return sign * (n % 2 ? Infinity : copysign(Infinity, x));
  const s = n + 1;
  let total = 0;
  if (x <= n) {
    for (let k = 0; k < 100000; k++) {
      const term = Math.exp(-s * Math.log1p(k / x));
      total += term;
      if (term < 1e-17 * total) break;
    }
  } else {
    total = x / (s - 1) + 0.5;
    let rising = s, power = 1 / x;
    for (let k = 1; k <= BERNOULLI.length; k++) {
      total += (BERNOULLI[k - 1] / factorial(2 * k)) * rising * power;
      rising *= (s + 2 * k - 1) * (s + 2 * k);
      power /= x * x;
    }
  }
  return sign * Math.exp(lgamma(s) - s * Math.log(x) + Math.log(total));
}
function erfinvEstimate(x) {
  let w = -Math.log((1 - x) * (1 + x)), p;
  if (w < 5) {
    w -= 2.5;
    p = 2.81022636e-08;
    for (const c of [3.43273939e-07, -3.5233877e-06, -4.39150654e-06, 0.00021858087, -0.00125372503, -0.00417768164, 0.246640727, 1.50140941]) p = c + p * w;
  } else {
    w = Math.sqrt(w) - 3;
    p = -0.000200214257;
    for (const c of [0.000100950558, 0.00134934322, -0.00367342844, 0.00573950773, -0.0076224613, 0.00943887047, 1.00167406, 2.83297682]) p = c + p * w;
  }
  return p * x;
}
function erfinv(x) {
  if (!(-1 <= x && x <= 1)) return NaN;
  if (Math.abs(x) === 1) return x * Infinity;
  if (Math.abs(x) < 1e-150) return x * (SQRT_PI / 2);
  const a = Math.abs(x);
  let y = erfinvEstimate(a);
  for (let i = 0; i < 8; i++) {
    const f = a <= 0.5 ? erf(y) - a : 1 - a - erfc(y);
    if (f === 0) break;
    const step = f / ((2 / SQRT_PI) * Math.exp(-y * y));
    y -= step / (1 + y * step);
    if (Math.abs(step) < 1e-17 * y) break;
  }
  return copysign(y, x);
}
