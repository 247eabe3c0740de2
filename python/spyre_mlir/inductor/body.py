"""The ops of Inductor's ops handler as arith/math ops inside a
spyre.generic body: one method per op, with the type conversions Inductor
leaves implicit (mixed operand types, booleans, integer division)."""

from __future__ import annotations

import math as pymath

import sympy

from ..dialects import arith, math, spyre
from ..ir import AffineMap, F32Type, IntegerType, Type, Value
from . import polynomials, special
from .trace import TV, Unsupported, element_type, linear


def affine_expr(base: int, coeffs: list[int]):
    """base + sum(coeffs[d] * d_d) as an affine expression of the loops."""
    from ..ir import AffineConstantExpr, AffineDimExpr
    expr = AffineConstantExpr.get(base)
    for d, c in enumerate(coeffs):
        if c:
            expr = expr + AffineDimExpr.get(d) * c
    return expr


class Body:
    """Emits the ops of a trace inside a generic body."""

    def __init__(self, values: dict, variables):
        self.values = values
        self.variables = variables

    def get(self, tv) -> Value:
        if not isinstance(tv, TV):
            raise Unsupported(f"operand {tv!r}")
        return self.values[tv]

    # Types ---------------------------------------------------------------
    @staticmethod
    def is_float(t: Type) -> bool:
        return not isinstance(t, IntegerType)

    def const(self, value, t: Type) -> Value:
        if self.is_float(t):
            return arith.constant(t, float(value))
        if IntegerType(t).width == 1:
            return arith.constant(t, int(bool(value)))
        return arith.constant(t, int(value))

    def cast(self, v: Value, t: Type) -> Value:
        s = v.type
        if s == t:
            return v
        sf, tf = self.is_float(s), self.is_float(t)
        widened = v.owner.operands[0] if getattr(v.owner, "name", None) == "arith.extf" else None
        if sf and tf and widened is not None and widened.type == t:
            return widened  # narrowing back what was widened: no rounding
        if sf and tf:
            return arith.extf(t, v) if _width(s) < _width(t) else arith.truncf(t, v)
        if sf and not tf:
            if IntegerType(t).width == 1:
                return arith.cmpf(arith.CmpFPredicate.UNE, v, self.const(0, s))
            return self._float_to_int(v, t)
        if not sf and tf:
            if IntegerType(s).width == 1:
                return arith.uitofp(t, v)
            return arith.sitofp(t, v)
        sw, tw = IntegerType(s).width, IntegerType(t).width
        if tw == 1:
            return arith.cmpi(arith.CmpIPredicate.ne, v, self.const(0, s))
        if sw == 1:
            return arith.extui(t, v)
        return arith.extsi(t, v) if sw < tw else arith.trunci(t, v)

    def _float_to_int(self, v: Value, t: Type) -> Value:
        """PyTorch's conversion on x86: truncation to int32, where NaN and
        values outside int32 give INT32_MIN (the instruction's "integer
        indefinite"), then narrower types keep the low bits (500.0 -> int8
        is -12). The card's conversion saturates and makes NaN 0, so the
        out-of-range case is selected explicitly; int64 values leave int32
        only where ranges.py has refused them."""
        i32 = IntegerType.get_signless(32)
        limit = self.const(2.0 ** 31, v.type)
        inside = arith.andi(arith.cmpf(arith.CmpFPredicate.OGE, v, arith.negf(limit)),
                            arith.cmpf(arith.CmpFPredicate.OLT, v, limit))
        value = arith.select(inside, arith.fptosi(i32, v), self.const(-2 ** 31, i32))
        return self.cast(value, t)

    def common(self, a: Value, b: Value) -> tuple[Value, Value]:
        if a.type == b.type:
            return a, b
        ta, tb = a.type, b.type
        if self.is_float(ta) != self.is_float(tb):
            t = ta if self.is_float(ta) else tb
        else:
            t = ta if _width(ta) >= _width(tb) else tb
        return self.cast(a, t), self.cast(b, t)

    # Ops -----------------------------------------------------------------
    def emit(self, instr) -> None:
        handler = getattr(self, "op_" + instr.op, None)
        if handler is None:
            raise Unsupported(f"op {instr.op!r}")
        args = [self.get(a) if isinstance(a, TV) else a for a in instr.args]
        self.values[instr.result] = handler(*args, **instr.kwargs)

    # 16-bit floats are computed in f32, as Inductor's own CPU and GPU code
    # does: loaded values are widened, constants are f32 (PyTorch's opmath
    # type for them), and only an explicit to_dtype or the store rounds. A
    # chain like floor(a / b) must not round the quotient in between.
    def widen(self, v: Value) -> Value:
        return self.cast(v, F32Type.get()) if _is_16bit_float(v.type) else v

    def op_constant(self, value, dtype):
        t = Type.parse(element_type(dtype))
        if _is_16bit_float(t):
            t = F32Type.get()
        if isinstance(value, float) and pymath.isnan(value):
            return self.const(float("nan"), t)
        return self.const(value, t)

    def op_index_expr(self, expr, dtype):
        t = Type.parse(element_type(dtype))
        expr = sympy.sympify(expr)
        # Products of loops are factored (into affine factors where they
        # have them); indices with FloorDiv or ModularIndexing are not.
        v = self._index_value(expr if expr.atoms(sympy.Function) else sympy.factor(expr))
        return self.cast(v, t) if t != v.type else v

    def _index_value(self, expr) -> Value:
        """The value of an index expression: an affine one is an
        index_expr; a product or sum of affine ones (avg_pool's count of the
        window inside the input when padding is not counted is, per piece,
        (h1 - h0) * (w1 - w0)) is computed from them."""
        try:
            base, coeffs = linear(expr, self.variables)
            amap = AffineMap.get(len(self.variables), 0, [affine_expr(base, coeffs)])
            return spyre.IndexExprOp(IntegerType.get_signless(32), amap).result
        except Unsupported:
            if not (expr.is_Mul or expr.is_Add or
                    (expr.is_Pow and expr.exp.is_Integer and expr.exp > 0)):
                raise
        if expr.is_Pow:
            parts = [self._index_value(expr.base)] * int(expr.exp)
        else:
            parts = [self._index_value(a) for a in expr.args]
        combine = arith.addi if expr.is_Add else arith.muli
        value = parts[0]
        for part in parts[1:]:
            value = combine(value, part)
        return value

    def op_to_dtype(self, x, dtype, src_dtype=None, use_compute_types=True):
        return self.widen(self.cast(x, Type.parse(element_type(dtype))))

    def _float(self, x):
        return x if self.is_float(x.type) else self.cast(x, F32Type.get())

    def _arith(self, f_op, i_op, a, b):
        a, b = self.common(a, b)
        return f_op(a, b) if self.is_float(a.type) else i_op(a, b)

    def op_add(self, a, b): return self._arith(arith.addf, arith.addi, a, b)
    def op_sub(self, a, b): return self._arith(arith.subf, arith.subi, a, b)
    def op_mul(self, a, b): return self._arith(arith.mulf, arith.muli, a, b)
    def op_maximum(self, a, b): return self._arith(arith.maximumf, arith.maxsi, a, b)
    def op_minimum(self, a, b): return self._arith(arith.minimumf, arith.minsi, a, b)

    def op_truediv(self, a, b):
        a, b = self.common(self._float(a), self._float(b))
        return arith.divf(a, b)

    op_div = op_truediv

    def op_floordiv(self, a, b):
        a, b = self.common(a, b)
        if not self.is_float(a.type):
            return arith.floordivsi(a, b)
        # PyTorch's div_floor_floating, in f32 as its CPU kernel computes
        # 16-bit types: from fmod, so that a quotient rounding up to an
        # integer (27.28 / 1.605 = 16.99 is 17 in DLFloat16 and f16) still
        # floors below it.
        F, where = special.F, special.where
        f32 = F32Type.get()
        x, y = F(self.cast(a, f32)), F(self.cast(b, f32))
        mod = F(arith.remf(x.v, y.v))
        div = (x - mod) / y
        other_sign = special.Mask(arith.xori((y < 0).v, (mod < 0).v))
        div = where(~mod.eq(0) & other_sign, div - 1, div)
        floor = special.floor(div)
        floor = where(div - floor > 0.5, floor + 1, floor)
        result = where(div.eq(0), special.copysign(0.0, x / y), floor)
        result = where(y.eq(0), x / y, result)
        return self.cast(result.v, a.type)

    def op_truncdiv(self, a, b):
        # Integer division toward zero: the dividend less its remainder of
        # the dividend's sign (fmod) is an exact multiple of the divisor.
        a, b = self.common(a, b)
        if self.is_float(a.type):
            raise Unsupported("truncdiv of floating-point values")
        return arith.floordivsi(arith.subi(a, arith.remsi(a, b)), b)

    def op_neg(self, x):
        return arith.negf(x) if self.is_float(x.type) else arith.subi(self.const(0, x.type), x)

    def op_abs(self, x):
        return math.absf(x) if self.is_float(x.type) else math.absi(x)

    def op_relu(self, x):
        return self.op_maximum(x, self.const(0, x.type))

    def op_sigmoid(self, x):
        x = self._float(x)
        one = self.const(1, x.type)
        return arith.divf(one, arith.addf(one, math.exp(arith.negf(x))))

    def op_reciprocal(self, x):
        x = self._float(x)
        return arith.divf(self.const(1, x.type), x)

    def op_square(self, x): return self.op_mul(x, x)

    def op_where(self, c, a, b):
        a, b = self.common(a, b)
        return arith.select(self.cast(c, IntegerType.get_signless(1)), a, b)

    def op_pow(self, a, b):
        a, b = self.common(self._float(a), self._float(b))
        return math.powf(a, b)

    def _compare(self, fp, ip, a, b):
        a, b = self.common(a, b)
        if self.is_float(a.type):
            return arith.cmpf(fp, a, b)
        return arith.cmpi(ip, a, b)

    def op_eq(self, a, b): return self._compare(arith.CmpFPredicate.OEQ, arith.CmpIPredicate.eq, a, b)
    def op_ne(self, a, b): return self._compare(arith.CmpFPredicate.UNE, arith.CmpIPredicate.ne, a, b)
    def op_lt(self, a, b): return self._compare(arith.CmpFPredicate.OLT, arith.CmpIPredicate.slt, a, b)
    def op_le(self, a, b): return self._compare(arith.CmpFPredicate.OLE, arith.CmpIPredicate.sle, a, b)
    def op_gt(self, a, b): return self._compare(arith.CmpFPredicate.OGT, arith.CmpIPredicate.sgt, a, b)
    def op_ge(self, a, b): return self._compare(arith.CmpFPredicate.OGE, arith.CmpIPredicate.sge, a, b)

    def _bool(self, x): return self.cast(x, IntegerType.get_signless(1))
    def op_logical_and(self, a, b): return arith.andi(self._bool(a), self._bool(b))
    def op_logical_or(self, a, b): return arith.ori(self._bool(a), self._bool(b))
    def op_logical_xor(self, a, b): return arith.xori(self._bool(a), self._bool(b))

    # Inductor's and_/or_ are bitwise (its CPU code writes a & b): on masks,
    # the logical ones (Longformer's chunked attention masks).
    def op_and_(self, a, b): return self._integer(arith.andi, a, b)
    def op_or_(self, a, b): return self._integer(arith.ori, a, b)

    def op_logical_not(self, x):
        x = self._bool(x)
        return arith.xori(x, self.const(1, x.type))

    def _integer(self, op, a, b):
        a, b = self.common(a, b)
        if self.is_float(a.type):
            raise Unsupported("a bitwise op on floating-point values")
        return op(a, b)

    def op_bitwise_and(self, a, b): return self._integer(arith.andi, a, b)
    def op_bitwise_or(self, a, b): return self._integer(arith.ori, a, b)
    def op_bitwise_xor(self, a, b): return self._integer(arith.xori, a, b)

    def op_bitwise_not(self, x):
        ones = self.const(1 if IntegerType(x.type).width == 1 else -1, x.type)
        return arith.xori(x, ones)

    def op_isnan(self, x): return math.isnan(self._float(x))
    def op_isinf(self, x): return math.isinf(self._float(x))
    def op_fmod(self, a, b): return self._arith(arith.remf, arith.remsi, a, b)

    def op_remainder(self, a, b):
        # Python's %: the result takes the divisor's sign, so a remainder of
        # the other sign (fmod's, the dividend's) moves by one divisor.
        a, b = self.common(a, b)
        zero = self.const(0, a.type)
        r = self.op_fmod(a, b)
        wrong_sign = arith.andi(self.op_ne(r, zero),
                                arith.xori(self.op_lt(r, zero), self.op_lt(b, zero)))
        return arith.select(wrong_sign, self.op_add(r, b), r)

    def op_sign(self, x):
        # (x > 0) - (x < 0): NaN compares false both ways, so its sign is 0
        # as in PyTorch.
        if not self.is_float(x.type) and IntegerType(x.type).width == 1:
            return x
        zero = self.const(0, x.type)
        return self.op_sub(self.cast(self.op_gt(x, zero), x.type),
                           self.cast(self.op_lt(x, zero), x.type))

    def op_signbit(self, x):
        # copysign carries the sign bit, so -0.0 and -NaN count as negative.
        if not self.is_float(x.type):
            return self.op_lt(x, self.const(0, x.type))
        one = self.const(1, x.type)
        return self.op_lt(math.copysign(one, x), self.const(0, x.type))

    def op_copysign(self, a, b):
        a, b = self.common(self._float(a), self._float(b))
        return math.copysign(a, b)

    def op_atan2(self, a, b):
        a, b = self.common(self._float(a), self._float(b))
        return math.atan2(a, b)

    def op_hypot(self, a, b):
        # max * sqrt(1 + (min / max)^2): squaring the operands themselves
        # would overflow long before the result does (DLFloat16 above all).
        a, b = self.common(self._float(a), self._float(b))
        a, b = math.absf(a), math.absf(b)
        big, small = arith.maximumf(a, b), arith.minimumf(a, b)
        ratio = arith.divf(small, big)
        one = self.const(1, a.type)
        h = arith.mulf(big, math.sqrt(arith.addf(one, arith.mulf(ratio, ratio))))
        # 0 / 0 and inf / inf have no ratio: hypot(0, 0) is 0 and an
        # infinite operand makes the result infinite even beside a NaN.
        h = arith.select(self.op_eq(big, self.const(0, a.type)), big, h)
        inf = self.const(float("inf"), a.type)
        return arith.select(arith.ori(self.op_eq(a, inf), self.op_eq(b, inf)), inf, h)

    def op_div_rn(self, a, b):  # division rounded to nearest: the card's divf
        return self.op_truediv(a, b)

    def op_fma(self, a, b, c):
        # Not fused: the SFU rounds the product to f32 before adding, which
        # is within the card's tolerance for what Inductor uses fma for.
        return self.op_add(self.op_mul(a, b), c)

    # Special functions (special.py), computed in f32 and rounded to the
    # type of their operand.
    def _special(self, fn, *args):
        f32 = F32Type.get()
        result = fn(*(special.F(self.cast(a, f32)) for a in args)).v
        t = args[-1].type
        return self.cast(result, t if self.is_float(t) else f32)

    def op_polygamma(self, n, x):
        order = _constant(n)
        if order is None or order != int(order) or order < 0:
            raise Unsupported("polygamma of an order that is not a constant non-negative "
                              "integer")
        return self._special(lambda v: special.polygamma(int(order), v), x)

    def op_hermite_polynomial_h(self, x, n):
        return self._special(lambda a, b: polynomials.hermite(a, b, True, _constant(n)), x, n)

    def op_hermite_polynomial_he(self, x, n):
        return self._special(lambda a, b: polynomials.hermite(a, b, False, _constant(n)), x, n)

    def _constant_order(self, name, n) -> int:
        order = _constant(n)
        if order is None or not 0 <= order <= polynomials.UNROLL_LIMIT:
            raise Unsupported(f"{name} of an order that is not a constant in [0, "
                              f"{polynomials.UNROLL_LIMIT}]: PyTorch runs its recurrence n "
                              "times, which a generic body cannot for an unknown n")
        return int(order)

    def op_laguerre_polynomial_l(self, x, n):
        order = self._constant_order("laguerre_polynomial_l", n)
        return self._special(lambda a, b: polynomials.laguerre(a, b, order), x, n)

    def op_legendre_polynomial_p(self, x, n):
        order = self._constant_order("legendre_polynomial_p", n)
        return self._special(lambda a, b: polynomials.legendre(a, b, order), x, n)

    def op_nextafter(self, a, b):
        raise Unsupported("nextafter steps through the bits of a float, which no vector "
                          "instruction reachable from a generic body does (fp16 has one "
                          "fraction bit more than the card's DLFloat16, too)")


def _unary_float(fn):
    def op(self, x):
        return fn(self._float(x))
    return op


for _name, _fn in {"exp": math.exp, "exp2": math.exp2, "expm1": math.expm1, "log": math.log,
                   "log1p": math.log1p, "log2": math.log2, "log10": math.log10,
                   "sqrt": math.sqrt, "rsqrt": math.rsqrt, "tanh": math.tanh, "erf": math.erf,
                   "erfc": math.erfc, "sin": math.sin, "cos": math.cos, "tan": math.tan,
                   "asin": math.asin, "acos": math.acos, "atan": math.atan, "sinh": math.sinh,
                   "cosh": math.cosh, "asinh": math.asinh, "acosh": math.acosh,
                   "atanh": math.atanh, "floor": math.floor, "ceil": math.ceil,
                   "trunc": math.trunc, "round": math.roundeven,
                   "libdevice_exp": math.exp}.items():
    setattr(Body, "op_" + _name, _unary_float(_fn))


def _special_op(fn):
    def op(self, *args):
        return self._special(fn, *args)
    return op


for _name, _fn in {"lgamma": special.lgamma, "digamma": special.digamma, "zeta": special.zeta,
                   "erfinv": special.erfinv, "ndtri": special.ndtri, "erfcx": special.erfcx,
                   "i0": special.i0, "i0e": special.i0e, "i1": special.i1, "i1e": special.i1e,
                   "modified_bessel_i0": special.i0, "modified_bessel_i1": special.i1,
                   "modified_bessel_k0": special.k0, "modified_bessel_k1": special.k1,
                   "scaled_modified_bessel_k0": special.k0e,
                   "scaled_modified_bessel_k1": special.k1e,
                   "bessel_j0": special.j0, "bessel_j1": special.j1, "bessel_y0": special.y0,
                   "bessel_y1": special.y1,
                   "spherical_bessel_j0": special.spherical_j0}.items():
    setattr(Body, "op_" + _name, _special_op(_fn))


for _name, _fn in polynomials.CHEBYSHEV.items():
    setattr(Body, "op_" + _name, _special_op(_fn))


def _constant(v: Value):
    """The value of a body constant (possibly converted), or None."""
    op = v.owner  # a Block for block arguments
    while getattr(op, "name", None) in ("arith.sitofp", "arith.extf", "arith.truncf",
                                        "arith.fptosi", "arith.extsi", "arith.trunci"):
        op = op.operands[0].owner
    if getattr(op, "name", None) != "arith.constant":
        return None
    return float(op.attributes["value"].value)


def _is_16bit_float(t: Type) -> bool:
    return str(t) in ("f16", "bf16")


def _width(t: Type) -> int:
    text = str(t)
    return {"f16": 16, "bf16": 16, "f32": 32, "f64": 64}.get(text) or IntegerType(t).width
