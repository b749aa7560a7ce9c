"""Special functions in plain Python, for the ops table: sin(pi*x) and the normalized sinc
with its derivatives, log|gamma|, digamma and polygamma, and the inverse error function.

Each keeps its digits where the textbook formula loses them: sinpi reduces its argument
exactly (sin(pi*x) is 0 at every integer, not 1.2e-16*x), lgamma sums series about its zeros
at 1 and 2 (where math.lgamma is off by millions of units in the last place), digamma sums
its Taylor series about its positive zero, sinc's derivatives sum their series near 0 (where
(cos(pi*x) - sinc(x))/x cancels), and erfinv refines an estimate by Halley's method on erf, or
on erfc near +-1. Results follow IEEE 754: nan and inf, never an exception. Nothing here
depends on SciPy; the tape uses SciPy's versions where it is installed (vector_ops).
"""

from __future__ import annotations

import functools
import math

INF = math.inf
NAN = math.nan
PI = math.pi
EULER = 0.5772156649015329
LOG_PI = math.log(PI)
HALF_LOG_2PI = 0.5 * math.log(2.0 * PI)

# zeta(k) - 1 for k = 2, 3, ...: lgamma's series about 1 and 2.
ZETA_M1 = (
    0.6449340668482264,
    0.2020569031595943,
    0.08232323371113819,
    0.03692775514336993,
    0.01734306198444914,
    0.008349277381922827,
    0.00407735619794434,
    0.0020083928260822143,
    0.0009945751278180853,
    0.0004941886041194645,
    0.0002460865533080483,
    0.00012271334757848915,
    6.124813505870483e-05,
    3.058823630702049e-05,
    1.528225940865187e-05,
    7.637197637899763e-06,
    3.81729326499984e-06,
    1.908212716553939e-06,
    9.539620338727962e-07,
    4.769329867878064e-07,
    2.38450502727733e-07,
    1.1921992596531106e-07,
    5.960818905125948e-08,
    2.980350351465228e-08,
    1.4901554828365043e-08,
    7.45071178983543e-09,
    3.725334024788457e-09,
    1.862659723513049e-09,
    9.313274324196682e-10,
    4.656629065033784e-10,
    2.3283118336765053e-10,
    1.164155017270052e-10,
    5.820772087902701e-11,
    2.9103850444971e-11,
    1.4551921891041985e-11,
    7.275959835057482e-12,
    3.637979547378651e-12,
    1.818989650307066e-12,
)
# Bernoulli numbers B2, B4, ...: the asymptotic series of lgamma and the polygammas.
BERNOULLI = (
    0.16666666666666666,
    -0.03333333333333333,
    0.023809523809523808,
    -0.03333333333333333,
    0.07575757575757576,
    -0.2531135531135531,
    1.1666666666666667,
    -7.092156862745098,
    54.971177944862156,
    -529.1242424242424,
    6192.123188405797,
    -86580.25311355312,
)
# digamma's positive zero (as a sum of two floats) and its Taylor coefficients there,
# polygamma(n, x0)/n!, n = 1, 2, ...
DIGAMMA_ZERO = (1.4616321449683622, 9.549995429965697e-17)
DIGAMMA_AT_ZERO = (
    0.9676722454476212,
    -0.4427631689835921,
    0.258499760955651,
    -0.16394270544240652,
    0.10782405069126237,
    -0.07219956125645471,
    0.04880428816414311,
    -0.03316112647484736,
    0.022597648232218104,
    -0.01542476590494896,
    0.010538791616612175,
    -0.007204534386356869,
    0.004926781395729853,
    -0.003369801655439328,
    0.002305126326734928,
    -0.0015769367714301972,
    0.0010788252019162967,
    -0.0007380709389960052,
    0.000504953265834602,
    -0.0003454680251063077,
    0.00023635601564027053,
    -0.00016170622091974803,
    0.0001106337276874741,
    -7.569179582195066e-05,
    5.178575795222081e-05,
    -3.5430070947659604e-05,
    2.424006611860132e-05,
    -1.6584242271854135e-05,
    1.134638458466385e-05,
    -7.762817668462094e-06,
    5.3110609208898636e-06,
    -3.6336507898010456e-06,
    2.486022733129538e-06,
    -1.7008538854332607e-06,
    1.1636675363548843e-06,
    -7.96142543124197e-07,
    5.446941930669446e-07,
    -3.7266161283438227e-07,
    2.549626552021554e-07,
    -1.7443695117727745e-07,
)


def _finite(x: float) -> bool:
    return x - x == 0.0


def _polynomial(coefficients, x: float) -> float:
    """sum(c * x**k for k, c in enumerate(coefficients)), by Horner's rule."""
    total = 0.0
    for c in reversed(coefficients):
        total = total * x + c
    return total


# --- sin(pi*x), cos(pi*x) and sinc --------------------------------------------------------


def sinpi(x: float) -> float:
    """sin(pi*x), with x reduced exactly: 0 at every integer, +-1 at every half-integer."""
    if not _finite(x):
        return NAN
    r = math.fmod(x, 2.0)  # exact, in (-2, 2)
    sign = 1.0
    if r < 0.0:
        r, sign = -r, -1.0
    if r > 1.0:  # sin(pi*r) = -sin(pi*(r - 1)), r - 1 exact
        r, sign = r - 1.0, -sign
    if r > 0.5:  # sin(pi*r) = sin(pi*(1 - r)), 1 - r exact
        r = 1.0 - r
    if r <= 0.25:
        return sign * math.sin(PI * r)
    return sign * math.cos(PI * (0.5 - r))


def cospi(x: float) -> float:
    """cos(pi*x), with x reduced exactly: 0 at every half-integer."""
    if not _finite(x):
        return NAN
    return sinpi(0.5 - math.fmod(abs(x), 2.0))  # 0.5 - r is exact for r in [0, 2)


def sinc(x: float) -> float:
    """sin(pi*x)/(pi*x), 1 at 0, 0 at +-inf (its limit)."""
    if x == 0.0:
        return 1.0
    if not _finite(x):
        return 0.0 if x == x else NAN
    return sinpi(x) / (PI * x)


# The Taylor series of sin(y)/y and its first two derivatives by y, in y**2, for |y| < pi/2:
# sinc'(x) = pi*y*s1(y*y) and sinc''(x) = pi**2*s2(y*y) with y = pi*x.
def _series(order: int) -> tuple[float, ...]:
    terms = []
    for k in range(1, 20):
        # the order-th derivative of (-1)^k y^(2k)/(2k + 1)!: (2k)!/(2k - order)! times
        # (-1)^k y^(2k - order)/(2k + 1)!
        c = (-1) ** k * math.perm(2 * k, order) / math.factorial(2 * k + 1)
        terms.append(c)
    return tuple(terms)


_SINC1 = _series(1)  # in y**(2k - 1), k = 1, 2, ...: y*polynomial(y*y)
_SINC2 = _series(2)  # in y**(2k - 2), k = 1, 2, ...: polynomial(y*y)
SERIES_BELOW = 0.5  # |x| below which sinc's derivatives are summed as series


def dsinc(x: float) -> float:
    """d/dx sinc(x) = (cos(pi*x) - sinc(x))/x: a series for |x| < 1/2, where that cancels."""
    if not _finite(x):
        return 0.0 if x == x else NAN
    if abs(x) < SERIES_BELOW:
        y = PI * x
        return PI * y * _polynomial(_SINC1, y * y)
    return (cospi(x) - sinc(x)) / x


def d2sinc(x: float) -> float:
    """d^2/dx^2 sinc(x) = -pi**2*sinc(x) - 2*dsinc(x)/x: a series for |x| < 1/2."""
    if not _finite(x):
        return 0.0 if x == x else NAN
    if abs(x) < SERIES_BELOW:
        y = PI * x
        return PI * PI * _polynomial(_SINC2, y * y)
    return -PI * PI * sinc(x) - 2.0 * dsinc(x) / x


# --- gamma, log|gamma| --------------------------------------------------------------------


def _integer(x: float) -> bool:
    return x == math.floor(x)


def gamma(x: float) -> float:
    """math.gamma with IEEE results: +-inf at +-0, nan at the negative integers and -inf, +-inf
    where it overflows (-inf just below 0)."""
    if x == 0.0:
        return math.copysign(INF, x)
    if x != x or x == -INF or (x < 0.0 and _integer(x)):
        return NAN
    try:
        return math.gamma(x)
    except OverflowError:  # past 171.6, or about 0, where gamma(x) is about 1/x
        return math.copysign(INF, x)


def _lgamma_near_2(z: float) -> float:
    """lgamma(2 + z) for |z| <= 1/2: (1 - gamma)*z + sum (-1)^k (zeta(k) - 1)/k z^k."""
    total = 0.0
    for k in range(len(ZETA_M1) + 1, 1, -1):
        total = total * z + (-1) ** k * ZETA_M1[k - 2] / k
    return z * ((1.0 - EULER) + z * total)


def _lgamma_near_1(z: float) -> float:
    """lgamma(1 + z) for |z| <= 1/2: -gamma*z + sum (-1)^k zeta(k)/k z^k; zeta(k) is
    1 + ZETA_M1 and, past the table, 1."""
    total = 0.0
    for k in range(60, 1, -1):
        zeta = 1.0 + (ZETA_M1[k - 2] if k - 2 < len(ZETA_M1) else 0.0)
        total = total * z + (-1) ** k * zeta / k
    return z * (-EULER + z * total)


def _lgamma_stirling(x: float) -> float:
    """lgamma(x) for x >= 10: Stirling's series."""
    inverse = 1.0 / x
    square = inverse * inverse
    series = 0.0
    for k in range(len(BERNOULLI), 0, -1):
        series = series * square + BERNOULLI[k - 1] / (2 * k * (2 * k - 1))
    return (x - 0.5) * math.log(x) - x + HALF_LOG_2PI + series * inverse


def lgamma(x: float) -> float:
    """log|gamma(x)|, accurate near its zeros at 1 and 2: inf at the poles (0 and the
    negative integers) and at +-inf, as C's lgamma."""
    if x != x:
        return NAN
    if x == INF or x == -INF:
        return INF
    if x <= 0.0:
        if _integer(x):
            return INF
        if x > -0.5:  # gamma(x) = gamma(1 + x)/x: no sin(pi*x), which rounds at subnormals
            return _lgamma_near_1(x) - math.log(-x)
        # reflection: gamma(x)*gamma(1 - x) = pi/sin(pi*x)
        return LOG_PI - math.log(abs(sinpi(x))) - lgamma(1.0 - x)
    if x >= 10.0:
        return _lgamma_stirling(x)
    if x < 0.5:  # lgamma(x) = lgamma(1 + x) - log(x), the series about 1 in x itself
        return _lgamma_near_1(x) - math.log(x)
    if x <= 1.5:
        return _lgamma_near_1(x - 1.0) + 0.0  # x - 1 is exact; +0 at 1, as C has it
    # lgamma(x) = lgamma(x - n) + log((x - 1)*...*(x - n)), x - n in (1.5, 2.5]
    product = 1.0
    while x > 2.5:
        x -= 1.0  # exact
        product *= x
    return _lgamma_near_2(x - 2.0) + (math.log(product) if product != 1.0 else 0.0)


# --- digamma and polygamma -----------------------------------------------------------------


def cotpi(x: float) -> float:
    """cot(pi*x) = cos(pi*x)/sin(pi*x), with x reduced exactly."""
    return cospi(x) / sinpi(x)


def _digamma_asymptotic(x: float) -> float:
    inverse = 1.0 / x
    square = inverse * inverse
    series = 0.0
    for k in range(8, 0, -1):
        series = series * square + BERNOULLI[k - 1] / (2 * k)
    return math.log(x) - 0.5 * inverse - series * square


def _digamma_near_zero(h: float) -> float:
    """digamma(x0 + h) for |h| <= 0.54, x0 its positive zero."""
    return h * _polynomial(DIGAMMA_AT_ZERO, h)


def digamma(x: float) -> float:
    """d/dx lgamma(x): -inf at +0 and inf at -0 (as -1/x), nan at the negative integers and
    -inf, inf at inf; accurate near its positive zero 1.4616..."""
    if x != x or x == -INF:
        return NAN
    if x == INF:
        return INF
    if x <= 0.0:
        if x == 0.0:
            return -math.copysign(INF, x)  # as -1/x: -inf at +0, inf at -0
        if _integer(x):
            return NAN
        # reflection: digamma(1 - x) - digamma(x) = pi*cot(pi*x)
        return digamma(1.0 - x) - PI * cotpi(x)
    zero, zero_low = DIGAMMA_ZERO
    if x < 1.0:  # digamma(x) = digamma(x + 1) - 1/x, x + 1 near the zero
        return _digamma_near_zero((x - (zero - 1.0)) - zero_low) - 1.0 / x
    if x <= 2.0:
        return _digamma_near_zero((x - zero) - zero_low)
    if x >= 10.0:
        return _digamma_asymptotic(x)
    total = 0.0  # digamma(x) = digamma(x - n) + 1/(x - 1) + ... + 1/(x - n), x - n in (1, 2]
    while x > 2.0:
        x -= 1.0  # exact
        total += 1.0 / x
    return _digamma_near_zero((x - zero) - zero_low) + total


@functools.cache
def _cot_derivative(n: int) -> tuple[float, ...]:
    """The coefficients of P with d^n/du^n cot(u) = P(cot(u)): P0 = t, P(k+1) = -(1 + t**2)P(k)'."""
    p = [0, 1]
    for _ in range(n):
        derivative = [k * c for k, c in enumerate(p)][1:] or [0]
        # -(1 + t^2) * derivative
        nxt = [0] * (len(derivative) + 2)
        for k, c in enumerate(derivative):
            nxt[k] -= c
            nxt[k + 2] -= c
        p = nxt
    return tuple(map(float, p))


# Past this order, n! overflows: polygamma is computed from log(n!) (below 0, not at all: the
# reflection needs the n-th derivative of cot, whose coefficients overflow too).
HIGH_ORDER = 100


def polygamma(n: float, x: float) -> float:
    """The n-th derivative of digamma, for n = 0, 1, 2, ... (nan for any other n): at the
    poles inf for odd n, nan for even n but at +-0, where it is the limit from that side."""
    if not (n >= 0.0 and _finite(n) and _integer(n)):
        return NAN
    if n == 0.0:
        return digamma(x)
    if x != x or x == -INF:
        return NAN
    order = int(n)
    sign = 1.0 if order % 2 else -1.0  # (-1)**(n + 1)
    if x == INF:
        return sign * 0.0
    if x <= 0.0 and _integer(x) and x != 0.0:
        return INF if order % 2 else NAN
    if order > HIGH_ORDER:
        return _polygamma_of_high_order(order, x) if x >= 0.0 else NAN
    factorial = float(math.factorial(order))
    if x < 0.0:
        # reflection: polygamma(n, x) = (-1)^n polygamma(n, 1 - x) - pi^(n+1) cot^(n)(pi x)
        cot = _polynomial(_cot_derivative(order), cotpi(x))
        return (-1.0) ** order * polygamma(n, 1.0 - x) - PI ** (order + 1) * cot
    # polygamma(n, x) = polygamma(n, x + m) + (-1)^(n+1) n! sum 1/(x + k)^(n+1)
    large = 10.0 + order
    total = 0.0
    while x < large:
        total += _inverse_power(x, order + 1)
        x += 1.0
    inverse = 1.0 / x
    square = inverse * inverse
    series = _polynomial(_asymptotic_coefficients(order), square)
    asymptotic = _inverse_power(x, order) * (
        math.factorial(order - 1) + 0.5 * factorial * inverse + series * square
    )
    return sign * (asymptotic + factorial * total)


@functools.cache
def _asymptotic_coefficients(order: int) -> tuple[float, ...]:
    """B2k (2k + n - 1)!/(2k)!, k = 1, 2, ...: polygamma's asymptotic series in 1/x**2."""
    return tuple(
        b * (math.factorial(2 * k + order - 1) / math.factorial(2 * k))
        for k, b in enumerate(BERNOULLI, start=1)
    )


def _polygamma_of_high_order(order: int, x: float) -> float:
    """(-1)^(n+1) n! zeta(n + 1, x) for x >= 0, from log(n!): x^s zeta(s, x) summed term by
    term for x <= n, else by Euler-Maclaurin (s = n + 1), and scaled by exp(log(n!/x^s))."""
    sign = 1.0 if order % 2 else -1.0
    if x == 0.0:
        return sign * _inverse_power(x, order + 1)
    s = order + 1.0
    if x <= order:
        total = 0.0
        for k in range(100_000):  # (1 + k/x)^-s falls below 1e-17 by k = 40*x/s or so
            term = math.exp(-s * math.log1p(k / x))
            total += term
            if term < 1e-17 * total:
                break
    else:  # x/(s - 1) + 1/2 + sum B2k/(2k)! (s)(s + 1)...(s + 2k - 2) x^(1 - 2k)
        total = x / (s - 1.0) + 0.5
        rising, power = s, 1.0 / x
        for k in range(1, len(BERNOULLI) + 1):
            total += BERNOULLI[k - 1] / math.factorial(2 * k) * rising * power
            rising *= (s + 2 * k - 1) * (s + 2 * k)
            power /= x * x
    exponent = lgamma(s) - s * math.log(x) + math.log(total)
    return sign * (math.exp(exponent) if exponent < 709.0 else _exp_large(exponent))


def _exp_large(exponent: float) -> float:
    try:
        return math.exp(exponent)
    except OverflowError:
        return INF


def _inverse_power(x: float, k: int) -> float:
    """1/x**k without an exception: inf (of the sign a power of -0 has) for x = 0."""
    if x == 0.0:
        return math.copysign(INF, x) if k % 2 else INF
    try:
        return x**-k
    except OverflowError:
        return math.copysign(INF, x) if k % 2 else INF


# --- erfinv --------------------------------------------------------------------------------

_ROOT_PI = math.sqrt(PI)


def _erfinv_estimate(x: float) -> float:
    """Giles' single-precision approximation, to about 1e-7."""
    w = -math.log((1.0 - x) * (1.0 + x))
    if w < 5.0:
        w -= 2.5
        p = 2.81022636e-08
        for c in (
            3.43273939e-07,
            -3.5233877e-06,
            -4.39150654e-06,
            0.00021858087,
            -0.00125372503,
            -0.00417768164,
            0.246640727,
            1.50140941,
        ):
            p = c + p * w
    else:
        w = math.sqrt(w) - 3.0
        p = -0.000200214257
        for c in (
            0.000100950558,
            0.00134934322,
            -0.00367342844,
            0.00573950773,
            -0.0076224613,
            0.00943887047,
            1.00167406,
            2.83297682,
        ):
            p = c + p * w
    return p * x


def erfinv(x: float) -> float:
    """The inverse of erf on [-1, 1]: +-inf at +-1, nan outside."""
    if not -1.0 <= x <= 1.0:
        return NAN
    if abs(x) == 1.0:
        return math.copysign(INF, x)
    if abs(x) < 1e-150:
        return x * (_ROOT_PI / 2.0)  # the next term, pi/12*x**3, is below a unit of x
    a = abs(x)
    y = _erfinv_estimate(a)
    for _ in range(8):  # Halley's method on erf(y) = a: cubic convergence, from 1e-7
        # near 1, (1 - a) - erfc(y): erfc keeps the digits that 1 - erf(y) loses, and 1 - a
        # is exact
        f = math.erf(y) - a if a <= 0.5 else (1.0 - a) - math.erfc(y)
        slope = 2.0 / _ROOT_PI * math.exp(-y * y)
        if f == 0.0:
            break
        step = f / slope
        y -= step / (1.0 + y * step)
        if abs(step) < 1e-17 * y:
            break
    return math.copysign(y, x)
