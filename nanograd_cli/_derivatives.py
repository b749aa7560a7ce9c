"""Written by `python -m nanograd_cli._derivatives_writer` from the formulas of the ops table (_ops.py):
do not edit. Each op's local derivatives as its formulas write them, the op's own value as `out`."""

# ruff: noqa
# fmt: off

INF = float("inf")
NAN = float("nan")

# The formulas each function was written from, per key of ops.OPS: _ops.py uses a function only
# while its row still has these.
FORMULAS = {
    '+': ('1', '1'),
    '-': ('1', '-1'),
    '*': ('b', 'a'),
    '/': ('1/b', '-(a/b)/b'),
    '**': ('where((a == 0)*(b == 0), 0, where((abs(b*a**(b - 1)) < 2.2250738585072014e-308)*(a != 0)*(a - a == 0), b*a**where(b - 1 == round(b - 1), floor((b - 1)/2), (b - 1)/2)*a**(b - 1 - where(b - 1 == round(b - 1), floor((b - 1)/2), (b - 1)/2)), b*a**(b - 1)))', 'powlog(a, b)'),
    '%': ('1', '-round((a - a % b)/b)'),
    'neg': ('-1',),
    'exp': ('exp(x)',),
    'expm1': ('exp(x)',),
    'log': ('1/x',),
    'log/2': ('1/(x*log(base))', '-log(x, base)/(base*log(base))'),
    'log1p': ('1/(1 + x)',),
    'log2': ('1/(x*log(2))',),
    'log10': ('1/log(10)/x',),
    'sqrt': ('1/(2*sqrt(x))',),
    'cbrt': ('1/(3*cbrt(x)**2)',),
    'pow': ('where((a == 0)*(b == 0), 0, where((abs(b*a**(b - 1)) < 2.2250738585072014e-308)*(a != 0)*(a - a == 0), b*a**where(b - 1 == round(b - 1), floor((b - 1)/2), (b - 1)/2)*a**(b - 1 - where(b - 1 == round(b - 1), floor((b - 1)/2), (b - 1)/2)), b*a**(b - 1)))', 'powlog(a, b)'),
    'sin': ('cos(x)',),
    'cos': ('-sin(x)',),
    'tan': ('1 + tan(x)**2',),
    'sec': ('sec(x)*tan(x)',),
    'csc': ('-csc(x)*cot(x)',),
    'cot': ('-csc(x)**2',),
    'sinc': ('dsinc(x)',),
    'dsinc': ('where(abs(x) < 1e-8, -pi**2/3 + pi**4*x**2/10 - pi**6*x**4/168 + pi**8*x**6/6480, -pi**2*sinc(x) - 2*dsinc(x)/x)',),
    'asin': ('1/sqrt(where((abs(x) < 0.5) + (abs(x) >= 1), 1 - x**2, (1 - x)*(1 + x)))',),
    'acos': ('-1/sqrt(where((abs(x) < 0.5) + (abs(x) >= 1), 1 - x**2, (1 - x)*(1 + x)))',),
    'atan': ('1/(1 + x**2)',),
    'atan2': ('where(abs(x) < abs(y), x/y/(1 + (x/y)**2)/y, 1/(1 + (y/x)**2)/x)', 'where(abs(y) < abs(x), -(y/x/(1 + (y/x)**2))/x, -(1/(1 + (x/y)**2))/y)'),
    'hypot': ('where(abs(x) < abs(y), sign(y)*(x/y)/hypot(1, x/y), sign(x)/hypot(1, y/x))', 'where(abs(y) < abs(x), sign(x)*(y/x)/hypot(1, y/x), sign(y)/hypot(1, x/y))'),
    'sinh': ('cosh(x)',),
    'cosh': ('sinh(x)',),
    'tanh': ('sech(x)**2',),
    'asinh': ('1/hypot(1, x)',),
    'acosh': ('where(x == 1, 1/sqrt(x**2 - 1), 1/(sqrt(x - 1)*sqrt(x + 1)))',),
    'atanh': ('1/where((abs(x) < 0.5) + (abs(x) >= 1), 1 - x**2, (1 - x)*(1 + x))',),
    'sech': ('-sech(x)*tanh(x)',),
    'csch': ('-csch(x)*coth(x)',),
    'coth': ('-csch(x)**2',),
    'erf': ('2/sqrt(pi)*where(abs(x) < 26.5, exp(-(round(clamp(x, -27, 27)*1048576)/1048576)**2)*exp(-(clamp(x, -27, 27) - (round(clamp(x, -27, 27)*1048576)/1048576))*(clamp(x, -27, 27) + (round(clamp(x, -27, 27)*1048576)/1048576))), where(abs(x) < 26.75, exp(-(round(clamp(x, -27, 27)*1048576)/1048576)**2/2)*exp(-(clamp(x, -27, 27) - (round(clamp(x, -27, 27)*1048576)/1048576))*(clamp(x, -27, 27) + (round(clamp(x, -27, 27)*1048576)/1048576)))*exp(-(round(clamp(x, -27, 27)*1048576)/1048576)**2/2), exp(-(clamp(x, -40, 40)/2)*clamp(x, -40, 40))*exp(-(clamp(x, -40, 40)/2)*clamp(x, -40, 40))))',),
    'erfc': ('-(2/sqrt(pi)*where(abs(x) < 26.5, exp(-(round(clamp(x, -27, 27)*1048576)/1048576)**2)*exp(-(clamp(x, -27, 27) - (round(clamp(x, -27, 27)*1048576)/1048576))*(clamp(x, -27, 27) + (round(clamp(x, -27, 27)*1048576)/1048576))), where(abs(x) < 26.75, exp(-(round(clamp(x, -27, 27)*1048576)/1048576)**2/2)*exp(-(clamp(x, -27, 27) - (round(clamp(x, -27, 27)*1048576)/1048576))*(clamp(x, -27, 27) + (round(clamp(x, -27, 27)*1048576)/1048576)))*exp(-(round(clamp(x, -27, 27)*1048576)/1048576)**2/2), exp(-(clamp(x, -40, 40)/2)*clamp(x, -40, 40))*exp(-(clamp(x, -40, 40)/2)*clamp(x, -40, 40)))))',),
    'erfinv': ('sqrt(pi)/2*exp(erfinv(x)**2)',),
    'gamma': ('gamma(x)*digamma(x)',),
    'lgamma': ('digamma(x)',),
    'digamma': ('polygamma(1, x)',),
    'polygamma': ('0', 'where(n < 0, polygamma(n, x), polygamma(n + 1, x))'),
    'sigmoid': ('sigmoid(x)*sigmoid(-x)',),
    'softplus': ('sigmoid(x)',),
    'logaddexp': ('sigmoid(a - b)', 'sigmoid(b - a)'),
    'relu': ('step(x)',),
    'abs': ('sign(x)',),
    'max': ('(1 + sign(a - b))/2', '(1 - sign(a - b))/2'),
    'min': ('(1 - sign(a - b))/2', '(1 + sign(a - b))/2'),
    'clamp': ('(1 - step(lo - x))*(1 - step(x - hi))', 'step(lo - x)*step(hi - lo)', 'sign(step(x - hi) + step(lo - hi))'),
    '<': ('0', '0'),
    '<=': ('0', '0'),
    '>': ('0', '0'),
    '>=': ('0', '0'),
    '==': ('0', '0'),
    '!=': ('0', '0'),
    'where': ('0', 'c != 0', 'c == 0'),
    'step': ('0',),
    'sign': ('0',),
    'floor': ('0',),
    'ceil': ('0',),
    'round': ('0',),
    'powlog': ('where((abs(a**(b - 1)) < 2.2250738585072014e-308)*(a != 0)*(a - a == 0), b*powlog(a, where(b - 1 == round(b - 1), floor((b - 1)/2), (b - 1)/2))*a**(b - 1 - where(b - 1 == round(b - 1), floor((b - 1)/2), (b - 1)/2)) + a**where(b - 1 == round(b - 1), floor((b - 1)/2), (b - 1)/2)*a**(b - 1 - where(b - 1 == round(b - 1), floor((b - 1)/2), (b - 1)/2)), b*powlog(a, b - 1) + a**(b - 1))', 'where((abs(powlog(a, b)) < 2.2250738585072014e-308)*(a != 0)*(a - a == 0), powlog(a, b/2)*powlog(a, b/2), powlog(a, b)*powlog(a, 0))'),
}


def derivatives(forward):
    """Per key of ops.OPS, its derivative function; `forward` holds each op's forward
    function by its key."""
    abs = forward['abs']
    clamp = forward['clamp']
    cos = forward['cos']
    cosh = forward['cosh']
    cot = forward['cot']
    coth = forward['coth']
    csc = forward['csc']
    csch = forward['csch']
    digamma = forward['digamma']
    divide = forward['/']
    dsinc = forward['dsinc']
    exp = forward['exp']
    floor = forward['floor']
    hypot = forward['hypot']
    log = forward['log']
    polygamma = forward['polygamma']
    power = forward['**']
    powlog = forward['powlog']
    round = forward['round']
    sech = forward['sech']
    sigmoid = forward['sigmoid']
    sign = forward['sign']
    sin = forward['sin']
    sinc = forward['sinc']
    sinh = forward['sinh']
    sqrt = forward['sqrt']
    step = forward['step']
    tan = forward['tan']
    tanh = forward['tanh']

    def d_add(a, b, out):  # 1; 1
        return (1.0, 1.0)

    def d_subtract(a, b, out):  # 1; -1
        return (1.0, (-1.0))

    def d_multiply(a, b, out):  # b; a
        return (b, a)

    def d_divide(a, b, out):  # 1/b; -(a/b)/b
        return ((1.0 / b if b else divide(1.0, b)), ((-out) / b if b else divide((-out), b)))

    def d_power(a, b, out):  # where((a == 0)*(b == 0), 0, where((abs(b*a**(b - 1)) < 2.2250738585072014e-308)*(a != 0)*(a - a == 0), b*a**where(b - 1 == round(b - 1), floor((b - 1)/2), (b - 1)/2)*a**(b - 1 - where(b - 1 == round(b - 1), floor((b - 1)/2), (b - 1)/2)), b*a**(b - 1))); powlog(a, b)
        t1 = (b - 1.0)
        t2 = (b * power(a, t1))
        t3 = (t1 / 2.0)
        t4 = (floor(t3) if (1.0 if t1 == round(t1) else 0.0) != 0.0 else t3)
        return ((0.0 if ((1.0 if a == 0.0 else 0.0) * (1.0 if b == 0.0 else 0.0)) != 0.0 else (((b * power(a, t4)) * power(a, (t1 - t4))) if (((1.0 if abs(t2) < 2.2250738585072014e-308 else 0.0) * (1.0 if a != 0.0 else 0.0)) * (1.0 if (a - a) == 0.0 else 0.0)) != 0.0 else t2)), powlog(a, b))

    def d_mod(a, b, out):  # 1; -round((a - a % b)/b)
        return (1.0, (-round(((a - out) / b if b else divide((a - out), b)))))

    def d_negate(x, out):  # -1
        return ((-1.0),)

    def d_exp(x, out):  # exp(x)
        return (out,)

    def d_expm1(x, out):  # exp(x)
        return (exp(x),)

    def d_log(x, out):  # 1/x
        return ((1.0 / x if x else divide(1.0, x)),)

    def d_log_base(x, base, out):  # 1/(x*log(base)); -log(x, base)/(base*log(base))
        t1 = log(base)
        t2 = (x * t1)
        t3 = (base * t1)
        return ((1.0 / t2 if t2 else divide(1.0, t2)), ((-out) / t3 if t3 else divide((-out), t3)))

    def d_log1p(x, out):  # 1/(1 + x)
        t1 = (1.0 + x)
        return ((1.0 / t1 if t1 else divide(1.0, t1)),)

    def d_log2(x, out):  # 1/(x*log(2))
        t1 = (x * 0.6931471805599453)
        return ((1.0 / t1 if t1 else divide(1.0, t1)),)

    def d_log10(x, out):  # 1/log(10)/x
        return ((0.43429448190325176 / x if x else divide(0.43429448190325176, x)),)

    def d_sqrt(x, out):  # 1/(2*sqrt(x))
        t1 = (2.0 * out)
        return ((1.0 / t1 if t1 else divide(1.0, t1)),)

    def d_cbrt(x, out):  # 1/(3*cbrt(x)**2)
        t1 = (3.0 * (out * out))
        return ((1.0 / t1 if t1 else divide(1.0, t1)),)

    def d_pow(a, b, out):  # where((a == 0)*(b == 0), 0, where((abs(b*a**(b - 1)) < 2.2250738585072014e-308)*(a != 0)*(a - a == 0), b*a**where(b - 1 == round(b - 1), floor((b - 1)/2), (b - 1)/2)*a**(b - 1 - where(b - 1 == round(b - 1), floor((b - 1)/2), (b - 1)/2)), b*a**(b - 1))); powlog(a, b)
        t1 = (b - 1.0)
        t2 = (b * power(a, t1))
        t3 = (t1 / 2.0)
        t4 = (floor(t3) if (1.0 if t1 == round(t1) else 0.0) != 0.0 else t3)
        return ((0.0 if ((1.0 if a == 0.0 else 0.0) * (1.0 if b == 0.0 else 0.0)) != 0.0 else (((b * power(a, t4)) * power(a, (t1 - t4))) if (((1.0 if abs(t2) < 2.2250738585072014e-308 else 0.0) * (1.0 if a != 0.0 else 0.0)) * (1.0 if (a - a) == 0.0 else 0.0)) != 0.0 else t2)), powlog(a, b))

    def d_sin(x, out):  # cos(x)
        return (cos(x),)

    def d_cos(x, out):  # -sin(x)
        return ((-sin(x)),)

    def d_tan(x, out):  # 1 + tan(x)**2
        return ((1.0 + (out * out)),)

    def d_sec(x, out):  # sec(x)*tan(x)
        return ((out * tan(x)),)

    def d_csc(x, out):  # -csc(x)*cot(x)
        return (((-out) * cot(x)),)

    def d_cot(x, out):  # -csc(x)**2
        t1 = csc(x)
        return ((-(t1 * t1)),)

    def d_sinc(x, out):  # dsinc(x)
        return (dsinc(x),)

    def d_dsinc(x, out):  # where(abs(x) < 1e-8, -pi**2/3 + pi**4*x**2/10 - pi**6*x**4/168 + pi**8*x**6/6480, -pi**2*sinc(x) - 2*dsinc(x)/x)
        return ((((((-3.289868133696453) + ((97.40909103400242 * (x * x)) / 10.0)) - ((961.3891935753043 * power(x, 4.0)) / 168.0)) + ((9488.53101607057 * power(x, 6.0)) / 6480.0)) if (1.0 if abs(x) < 1e-08 else 0.0) != 0.0 else (((-9.869604401089358) * sinc(x)) - ((2.0 * out) / x if x else divide((2.0 * out), x)))),)

    def d_asin(x, out):  # 1/sqrt(where((abs(x) < 0.5) + (abs(x) >= 1), 1 - x**2, (1 - x)*(1 + x)))
        t1 = abs(x)
        t2 = sqrt(((1.0 - (x * x)) if ((1.0 if t1 < 0.5 else 0.0) + (1.0 if t1 >= 1.0 else 0.0)) != 0.0 else ((1.0 - x) * (1.0 + x))))
        return ((1.0 / t2 if t2 else divide(1.0, t2)),)

    def d_acos(x, out):  # -1/sqrt(where((abs(x) < 0.5) + (abs(x) >= 1), 1 - x**2, (1 - x)*(1 + x)))
        t1 = abs(x)
        t2 = sqrt(((1.0 - (x * x)) if ((1.0 if t1 < 0.5 else 0.0) + (1.0 if t1 >= 1.0 else 0.0)) != 0.0 else ((1.0 - x) * (1.0 + x))))
        return (((-1.0) / t2 if t2 else divide((-1.0), t2)),)

    def d_atan(x, out):  # 1/(1 + x**2)
        t1 = (1.0 + (x * x))
        return ((1.0 / t1 if t1 else divide(1.0, t1)),)

    def d_atan2(y, x, out):  # where(abs(x) < abs(y), x/y/(1 + (x/y)**2)/y, 1/(1 + (y/x)**2)/x); where(abs(y) < abs(x), -(y/x/(1 + (y/x)**2))/x, -(1/(1 + (x/y)**2))/y)
        t1 = abs(x)
        t2 = abs(y)
        t3 = (x / y if y else divide(x, y))
        t4 = (1.0 + (t3 * t3))
        t5 = (y / x if x else divide(y, x))
        t6 = (1.0 + (t5 * t5))
        return ((((t3 / t4 if t4 else divide(t3, t4)) / y if y else divide((t3 / t4 if t4 else divide(t3, t4)), y)) if (1.0 if t1 < t2 else 0.0) != 0.0 else ((1.0 / t6 if t6 else divide(1.0, t6)) / x if x else divide((1.0 / t6 if t6 else divide(1.0, t6)), x))), (((-(t5 / t6 if t6 else divide(t5, t6))) / x if x else divide((-(t5 / t6 if t6 else divide(t5, t6))), x)) if (1.0 if t2 < t1 else 0.0) != 0.0 else ((-(1.0 / t4 if t4 else divide(1.0, t4))) / y if y else divide((-(1.0 / t4 if t4 else divide(1.0, t4))), y))))

    def d_hypot(x, y, out):  # where(abs(x) < abs(y), sign(y)*(x/y)/hypot(1, x/y), sign(x)/hypot(1, y/x)); where(abs(y) < abs(x), sign(x)*(y/x)/hypot(1, y/x), sign(y)/hypot(1, x/y))
        t1 = abs(x)
        t2 = abs(y)
        t3 = sign(y)
        t4 = (x / y if y else divide(x, y))
        t5 = hypot(1.0, t4)
        t6 = sign(x)
        t7 = (y / x if x else divide(y, x))
        t8 = hypot(1.0, t7)
        return ((((t3 * t4) / t5 if t5 else divide((t3 * t4), t5)) if (1.0 if t1 < t2 else 0.0) != 0.0 else (t6 / t8 if t8 else divide(t6, t8))), (((t6 * t7) / t8 if t8 else divide((t6 * t7), t8)) if (1.0 if t2 < t1 else 0.0) != 0.0 else (t3 / t5 if t5 else divide(t3, t5))))

    def d_sinh(x, out):  # cosh(x)
        return (cosh(x),)

    def d_cosh(x, out):  # sinh(x)
        return (sinh(x),)

    def d_tanh(x, out):  # sech(x)**2
        t1 = sech(x)
        return ((t1 * t1),)

    def d_asinh(x, out):  # 1/hypot(1, x)
        t1 = hypot(1.0, x)
        return ((1.0 / t1 if t1 else divide(1.0, t1)),)

    def d_acosh(x, out):  # where(x == 1, 1/sqrt(x**2 - 1), 1/(sqrt(x - 1)*sqrt(x + 1)))
        t1 = sqrt(((x * x) - 1.0))
        t2 = (sqrt((x - 1.0)) * sqrt((x + 1.0)))
        return (((1.0 / t1 if t1 else divide(1.0, t1)) if (1.0 if x == 1.0 else 0.0) != 0.0 else (1.0 / t2 if t2 else divide(1.0, t2))),)

    def d_atanh(x, out):  # 1/where((abs(x) < 0.5) + (abs(x) >= 1), 1 - x**2, (1 - x)*(1 + x))
        t1 = abs(x)
        t2 = ((1.0 - (x * x)) if ((1.0 if t1 < 0.5 else 0.0) + (1.0 if t1 >= 1.0 else 0.0)) != 0.0 else ((1.0 - x) * (1.0 + x)))
        return ((1.0 / t2 if t2 else divide(1.0, t2)),)

    def d_sech(x, out):  # -sech(x)*tanh(x)
        return (((-out) * tanh(x)),)

    def d_csch(x, out):  # -csch(x)*coth(x)
        return (((-out) * coth(x)),)

    def d_coth(x, out):  # -csch(x)**2
        t1 = csch(x)
        return ((-(t1 * t1)),)

    def d_erf(x, out):  # 2/sqrt(pi)*where(abs(x) < 26.5, exp(-(round(clamp(x, -27, 27)*1048576)/1048576)**2)*exp(-(clamp(x, -27, 27) - (round(clamp(x, -27, 27)*1048576)/1048576))*(clamp(x, -27, 27) + (round(clamp(x, -27, 27)*1048576)/1048576))), where(abs(x) < 26.75, exp(-(round(clamp(x, -27, 27)*1048576)/1048576)**2/2)*exp(-(clamp(x, -27, 27) - (round(clamp(x, -27, 27)*1048576)/1048576))*(clamp(x, -27, 27) + (round(clamp(x, -27, 27)*1048576)/1048576)))*exp(-(round(clamp(x, -27, 27)*1048576)/1048576)**2/2), exp(-(clamp(x, -40, 40)/2)*clamp(x, -40, 40))*exp(-(clamp(x, -40, 40)/2)*clamp(x, -40, 40))))
        t1 = abs(x)
        t2 = clamp(x, (-27.0), 27.0)
        t3 = (round((t2 * 1048576.0)) / 1048576.0)
        t4 = (-(t3 * t3))
        t5 = exp(((-(t2 - t3)) * (t2 + t3)))
        t6 = exp((t4 / 2.0))
        t7 = clamp(x, (-40.0), 40.0)
        t8 = exp(((-(t7 / 2.0)) * t7))
        return ((1.1283791670955126 * ((exp(t4) * t5) if (1.0 if t1 < 26.5 else 0.0) != 0.0 else (((t6 * t5) * t6) if (1.0 if t1 < 26.75 else 0.0) != 0.0 else (t8 * t8)))),)

    def d_erfc(x, out):  # -(2/sqrt(pi)*where(abs(x) < 26.5, exp(-(round(clamp(x, -27, 27)*1048576)/1048576)**2)*exp(-(clamp(x, -27, 27) - (round(clamp(x, -27, 27)*1048576)/1048576))*(clamp(x, -27, 27) + (round(clamp(x, -27, 27)*1048576)/1048576))), where(abs(x) < 26.75, exp(-(round(clamp(x, -27, 27)*1048576)/1048576)**2/2)*exp(-(clamp(x, -27, 27) - (round(clamp(x, -27, 27)*1048576)/1048576))*(clamp(x, -27, 27) + (round(clamp(x, -27, 27)*1048576)/1048576)))*exp(-(round(clamp(x, -27, 27)*1048576)/1048576)**2/2), exp(-(clamp(x, -40, 40)/2)*clamp(x, -40, 40))*exp(-(clamp(x, -40, 40)/2)*clamp(x, -40, 40)))))
        t1 = abs(x)
        t2 = clamp(x, (-27.0), 27.0)
        t3 = (round((t2 * 1048576.0)) / 1048576.0)
        t4 = (-(t3 * t3))
        t5 = exp(((-(t2 - t3)) * (t2 + t3)))
        t6 = exp((t4 / 2.0))
        t7 = clamp(x, (-40.0), 40.0)
        t8 = exp(((-(t7 / 2.0)) * t7))
        return ((-(1.1283791670955126 * ((exp(t4) * t5) if (1.0 if t1 < 26.5 else 0.0) != 0.0 else (((t6 * t5) * t6) if (1.0 if t1 < 26.75 else 0.0) != 0.0 else (t8 * t8))))),)

    def d_erfinv(x, out):  # sqrt(pi)/2*exp(erfinv(x)**2)
        return ((0.8862269254527579 * exp((out * out))),)

    def d_gamma(x, out):  # gamma(x)*digamma(x)
        return ((out * digamma(x)),)

    def d_lgamma(x, out):  # digamma(x)
        return (digamma(x),)

    def d_digamma(x, out):  # polygamma(1, x)
        return (polygamma(1.0, x),)

    def d_polygamma(n, x, out):  # 0; where(n < 0, polygamma(n, x), polygamma(n + 1, x))
        return (0.0, (out if (1.0 if n < 0.0 else 0.0) != 0.0 else polygamma((n + 1.0), x)))

    def d_sigmoid(x, out):  # sigmoid(x)*sigmoid(-x)
        return ((out * sigmoid((-x))),)

    def d_softplus(x, out):  # sigmoid(x)
        return (sigmoid(x),)

    def d_logaddexp(a, b, out):  # sigmoid(a - b); sigmoid(b - a)
        return (sigmoid((a - b)), sigmoid((b - a)))

    def d_relu(x, out):  # step(x)
        return (step(x),)

    def d_abs(x, out):  # sign(x)
        return (sign(x),)

    def d_max(a, b, out):  # (1 + sign(a - b))/2; (1 - sign(a - b))/2
        t1 = sign((a - b))
        return (((1.0 + t1) / 2.0), ((1.0 - t1) / 2.0))

    def d_min(a, b, out):  # (1 - sign(a - b))/2; (1 + sign(a - b))/2
        t1 = sign((a - b))
        return (((1.0 - t1) / 2.0), ((1.0 + t1) / 2.0))

    def d_clamp(x, lo, hi, out):  # (1 - step(lo - x))*(1 - step(x - hi)); step(lo - x)*step(hi - lo); sign(step(x - hi) + step(lo - hi))
        t1 = step((lo - x))
        t2 = step((x - hi))
        return (((1.0 - t1) * (1.0 - t2)), (t1 * step((hi - lo))), sign((t2 + step((lo - hi)))))

    def d_less(a, b, out):  # 0; 0
        return (0.0, 0.0)

    def d_less_equal(a, b, out):  # 0; 0
        return (0.0, 0.0)

    def d_greater(a, b, out):  # 0; 0
        return (0.0, 0.0)

    def d_greater_equal(a, b, out):  # 0; 0
        return (0.0, 0.0)

    def d_equal(a, b, out):  # 0; 0
        return (0.0, 0.0)

    def d_not_equal(a, b, out):  # 0; 0
        return (0.0, 0.0)

    def d_where(c, a, b, out):  # 0; c != 0; c == 0
        return (0.0, (1.0 if c != 0.0 else 0.0), (1.0 if c == 0.0 else 0.0))

    def d_step(x, out):  # 0
        return (0.0,)

    def d_sign(x, out):  # 0
        return (0.0,)

    def d_floor(x, out):  # 0
        return (0.0,)

    def d_ceil(x, out):  # 0
        return (0.0,)

    def d_round(x, out):  # 0
        return (0.0,)

    def d_powlog(a, b, out):  # where((abs(a**(b - 1)) < 2.2250738585072014e-308)*(a != 0)*(a - a == 0), b*powlog(a, where(b - 1 == round(b - 1), floor((b - 1)/2), (b - 1)/2))*a**(b - 1 - where(b - 1 == round(b - 1), floor((b - 1)/2), (b - 1)/2)) + a**where(b - 1 == round(b - 1), floor((b - 1)/2), (b - 1)/2)*a**(b - 1 - where(b - 1 == round(b - 1), floor((b - 1)/2), (b - 1)/2)), b*powlog(a, b - 1) + a**(b - 1)); where((abs(powlog(a, b)) < 2.2250738585072014e-308)*(a != 0)*(a - a == 0), powlog(a, b/2)*powlog(a, b/2), powlog(a, b)*powlog(a, 0))
        t1 = (b - 1.0)
        t2 = power(a, t1)
        t3 = (1.0 if a != 0.0 else 0.0)
        t4 = (1.0 if (a - a) == 0.0 else 0.0)
        t5 = (t1 / 2.0)
        t6 = (floor(t5) if (1.0 if t1 == round(t1) else 0.0) != 0.0 else t5)
        t7 = power(a, (t1 - t6))
        t8 = powlog(a, (b / 2.0))
        return (((((b * powlog(a, t6)) * t7) + (power(a, t6) * t7)) if (((1.0 if abs(t2) < 2.2250738585072014e-308 else 0.0) * t3) * t4) != 0.0 else ((b * powlog(a, t1)) + t2)), ((t8 * t8) if (((1.0 if abs(out) < 2.2250738585072014e-308 else 0.0) * t3) * t4) != 0.0 else (out * powlog(a, 0.0))))

    return {
        '+': d_add,
        '-': d_subtract,
        '*': d_multiply,
        '/': d_divide,
        '**': d_power,
        '%': d_mod,
        'neg': d_negate,
        'exp': d_exp,
        'expm1': d_expm1,
        'log': d_log,
        'log/2': d_log_base,
        'log1p': d_log1p,
        'log2': d_log2,
        'log10': d_log10,
        'sqrt': d_sqrt,
        'cbrt': d_cbrt,
        'pow': d_pow,
        'sin': d_sin,
        'cos': d_cos,
        'tan': d_tan,
        'sec': d_sec,
        'csc': d_csc,
        'cot': d_cot,
        'sinc': d_sinc,
        'dsinc': d_dsinc,
        'asin': d_asin,
        'acos': d_acos,
        'atan': d_atan,
        'atan2': d_atan2,
        'hypot': d_hypot,
        'sinh': d_sinh,
        'cosh': d_cosh,
        'tanh': d_tanh,
        'asinh': d_asinh,
        'acosh': d_acosh,
        'atanh': d_atanh,
        'sech': d_sech,
        'csch': d_csch,
        'coth': d_coth,
        'erf': d_erf,
        'erfc': d_erfc,
        'erfinv': d_erfinv,
        'gamma': d_gamma,
        'lgamma': d_lgamma,
        'digamma': d_digamma,
        'polygamma': d_polygamma,
        'sigmoid': d_sigmoid,
        'softplus': d_softplus,
        'logaddexp': d_logaddexp,
        'relu': d_relu,
        'abs': d_abs,
        'max': d_max,
        'min': d_min,
        'clamp': d_clamp,
        '<': d_less,
        '<=': d_less_equal,
        '>': d_greater,
        '>=': d_greater_equal,
        '==': d_equal,
        '!=': d_not_equal,
        'where': d_where,
        'step': d_step,
        'sign': d_sign,
        'floor': d_floor,
        'ceil': d_ceil,
        'round': d_round,
        'powlog': d_powlog,
    }
