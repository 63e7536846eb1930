#!/usr/bin/python3
"""Decimal strings whose float value differs when rounded twice (decimal -> double -> float) from
rounding once (decimal -> float), with the correctly rounded float's bit pattern, computed exactly
with fractions. Prints the C++ table used by test_read_float_rounding.cpp.

How the strings are found: take two adjacent floats f < g and their midpoint m = (f + g) / 2, which
is a double (25 significant bits). A decimal a hair above m (m + 10^-k with 10^-k far below half a
double ulp of m) rounds to m as a double, and m, a tie, rounds to the even one of f and g as a
float; rounding the decimal once gives g, the float above, because it lies above the midpoint.
Pick f even to make the two differ (and mirror below the midpoint with f odd). Every case is then
checked here: the exact rounding (Fraction, round half to even on the float grid, subnormals
included) against Python's correctly rounded double followed by the double -> float cast
(struct's 'f' packing rounds to nearest even)."""
import struct
from decimal import Decimal, getcontext
from fractions import Fraction

getcontext().prec = 200


def float_bits_exact(x: Fraction) -> int:
    """Round x to binary32 (nearest, ties to even), exactly; finite results only."""
    sign = 0x80000000 if x < 0 else 0
    x = abs(x)
    if x == 0:
        return sign
    e = x.numerator.bit_length() - x.denominator.bit_length()  # 2^e <= x < 2^(e+2)
    while Fraction(2) ** e > x:
        e -= 1
    while Fraction(2) ** (e + 1) <= x:
        e += 1
    q = max(e, -126) - 23  # the quantum's exponent
    scaled = x / Fraction(2) ** q
    r = scaled.numerator // scaled.denominator
    rest = scaled - r
    if rest > Fraction(1, 2) or (rest == Fraction(1, 2) and r % 2 == 1):
        r += 1
    value = r * Fraction(2) ** q
    bits = struct.unpack("<I", struct.pack("<f", float(value)))[0]  # value is exactly a float
    assert Fraction(struct.unpack("<f", struct.pack("<I", bits))[0]) == value
    return sign | bits


def bits_of(f: float) -> int:
    return struct.unpack("<I", struct.pack("<f", f))[0]


def value_of(bits: int) -> Fraction:
    return Fraction(struct.unpack("<f", struct.pack("<I", bits))[0])


def case(f_bits: int, above: bool, extra_digits: int = 30, sign: str = "", scientific: bool = False):
    f, g = value_of(f_bits), value_of(f_bits + 1)
    m = (f + g) / 2
    tiny = Fraction(1, 10 ** (extra_digits + max(0, -Decimal(m.numerator / Decimal(m.denominator)).adjusted())))
    x = m + tiny if above else m - tiny
    text = format(Decimal(x.numerator) / Decimal(x.denominator), "f")
    if scientific:
        text = format(Decimal(x.numerator) / Decimal(x.denominator), "e")
    assert Fraction(Decimal(text)) == x, text  # the string is the exact decimal
    text = sign + text
    exact = float_bits_exact(-x if sign == "-" else x)
    twice = bits_of(float(text))  # correctly rounded double, then the cast
    assert exact != twice, text
    return text, exact, twice


cases = [
    case(0x3F800000, above=True),                     # 1 + 2^-24 + tiny: 1 (even) vs 1 + 2^-23
    case(0x3F800001, above=False),                    # 1 + 3 2^-24 - tiny: 1 + 2^-22 vs 1 + 2^-23
    case(0x3DCCCCCC, above=True, sign="-"),           # next to -0.1
    case(0x7F7FFFFE, above=True),                     # near the largest float, 39 integer digits
    case(0x00000002, above=True, scientific=True),    # subnormal: between 2 and 3 x 2^-149
    case(0x2B8CBCCD, above=False, scientific=True),   # ~1e-12, f odd
]
for text, exact, twice in cases:
    print(f'    {{"{text}", 0x{exact:08x}u}},  // rounding via double gives 0x{twice:08x}')
