"""The C ABI's types, built from the header the library was built with.

The library gives the text of its spiral_abi.h (``spiral_abi_header``) and
the layout its C compiler gave each structure (``spiral_abi_layout``). This
module turns the header's ``typedef struct`` blocks into ctypes Structures
and its enums into integers, then checks every structure's size and field
offsets against the compiler's: a field added to the header changes the
Structures with it, and any disagreement stops the import.
"""

from __future__ import annotations

import ctypes
import re
from typing import Any, Callable

_SCALARS = {
    "int64_t": ctypes.c_int64,
    "uint64_t": ctypes.c_uint64,
    "int32_t": ctypes.c_int32,
    "double": ctypes.c_double,
    "uintptr_t": ctypes.c_size_t,
}


def _strip_comments(text: str) -> str:
    text = re.sub(r"/\*.*?\*/", " ", text, flags=re.S)
    return re.sub(r"//[^\n]*", " ", text)


def parse(header: str) -> tuple[dict[str, type], dict[str, int]]:
    """Return the structures (ctypes Structures by C name) and enum constants of a header."""
    text = _strip_comments(header)
    consts: dict[str, int] = {}
    for body in re.findall(r"enum\s*\{(.*?)\}", text, flags=re.S):
        for name, value in re.findall(r"(\w+)\s*=\s*(-?\d+)", body):
            consts[name] = int(value)
    structs: dict[str, type] = {}
    for body, name in re.findall(r"typedef\s+struct\s*\{(.*?)\}\s*(\w+)\s*;", text, flags=re.S):
        fields: list[tuple[str, Any]] = []
        for decl in body.split(";"):
            decl = " ".join(decl.split())
            if not decl:
                continue
            m = re.fullmatch(r"(\w+)\s*(\*?)\s*(.*)", decl)
            if m is None:
                raise ImportError(f"spiral: spiral_abi.h: cannot read the declaration {decl!r} of {name}")
            ctype, pointer, names = m.groups()
            for field in names.split(","):
                field = field.strip()
                if field.startswith("*"):
                    pointer, field = "*", field[1:].strip()
                if pointer:
                    t: Any = ctypes.c_void_p
                elif ctype in _SCALARS:
                    t = _SCALARS[ctype]
                elif ctype in structs:
                    t = structs[ctype]
                else:
                    raise ImportError(f"spiral: spiral_abi.h: unknown type {ctype} of {name}.{field}")
                fields.append((field, t))
        structs[name] = type(name, (ctypes.Structure,), {"_fields_": fields})
    return structs, consts


def check(structs: dict[str, type], layout: str) -> None:
    """Raise ImportError unless every structure has the compiler's size and offsets."""
    seen = set()
    for line in layout.splitlines():
        name, size, *fields = line.split()
        s = structs.get(name)
        if s is None:
            raise ImportError(f"spiral: the library has the structure {name}, which its header does not declare")
        seen.add(name)
        got = [f"{f}:{getattr(s, f).offset}" for f, _ in s._fields_]
        if ctypes.sizeof(s) != int(size) or got != fields:
            raise ImportError(
                f"spiral: {name} as read from spiral_abi.h ({ctypes.sizeof(s)} bytes, {' '.join(got)}) "
                f"is not as the library was compiled ({size} bytes, {' '.join(fields)})"
            )
    missing = set(structs) - seen
    if missing:
        raise ImportError(f"spiral: the library reports no layout for {sorted(missing)}")


def load(text: Callable[[str], str]) -> tuple[dict[str, type], dict[str, int]]:
    """Build and check the structures; text(fn) returns the text a library function writes."""
    structs, consts = parse(text("spiral_abi_header"))
    check(structs, text("spiral_abi_layout"))
    return structs, consts
