#!/usr/bin/python3
# kconfig-enable.py - which Kconfig symbols to set to =y so that the wanted
# ones can be: the dependency solving `make olddefconfig` does not do.
#
#   kconfig-enable.py OUT CONFIG WANT...
#
# Run in the kernel tree with the environment make gives Kconfig (srctree,
# ARCH, SRCARCH, CC, LD...).  CONFIG is the .config to start from; each
# WANT is one group of alternatives, "ATA" or "SERIAL_8250|SERIAL_CORE":
# any one of them set builds the file that asked for the group.  OUT gets
# one "CONFIG_X=y" line per symbol to set, dependencies first, and a
# "# cannot: GROUP: why" line per group no alternative of which could be
# enabled.  A group that cannot be because it needs a symbol this
# architecture's Kconfig never defines, and that only some other
# architectures' define (arch/powerpc/ alone has PPC_PSERIES), also gets
# "# only-on: GROUP: SYMBOL: ARCH...": the bot need not build another
# architecture's kernel that cannot set it either.  The tree's own merge_config.sh and olddefconfig then make the
# config from these lines and the caller checks that every one took.
#
# Debian's python3-kconfiglib is the solver (the kernel's Kconfig tools
# only check dependencies, they do not satisfy them); it predates the
# `modules` keyword of kernels from 6.0 on, read here as the old
# `option modules`.
import io
import os
import re
import sys

import kconfiglib

_open = kconfiglib.Kconfig._open


def open_kconfig(self, filename, mode):
    f = _open(self, filename, mode)
    if mode != "r" or "Kconfig" not in filename:
        return f
    text = f.read()
    f.close()
    return io.StringIO(re.sub(r"(?m)^(\s*)modules\s*$", r"\1option modules", text))


kconfiglib.Kconfig._open = open_kconfig

YES = 2


class Solver:
    def __init__(self, kconf):
        self.kconf = kconf
        self.order = []      # symbols set, in the order set (dependencies first)
        self.busy = set()    # symbols being enabled (dependency cycles)

    def enable(self, sym):
        if sym.tri_value == YES:
            return True
        if sym.type not in (kconfiglib.BOOL, kconfiglib.TRISTATE) or sym in self.busy:
            return False
        self.busy.add(sym)
        try:
            if not self.satisfy(sym.direct_dep):
                return False
            if sym.tri_value == YES:
                # y by a default once its dependencies are (USB_ARCH_HAS_HCD: def_bool y
                # inside "if USB_SUPPORT"): nothing to set, and no prompt to set it with
                return True
            if sym.visibility != YES:
                # a prompt's own condition, or else one of the symbols that select it
                if not any(n.prompt and self.satisfy(n.prompt[1]) for n in sym.nodes) and \
                   not self.satisfy(sym.rev_dep):
                    return False
            if sym.tri_value != YES:
                sym.set_value(YES)
                if sym.tri_value != YES:
                    return False
                self.order.append(sym)
            return True
        finally:
            self.busy.discard(sym)

    def attempt(self, expr):
        """satisfy(expr), undoing what it set when it fails."""
        mark = len(self.order)
        if self.satisfy(expr):
            return True
        for sym in self.order[mark:]:
            sym.unset_value()
        del self.order[mark:]
        return False

    def satisfy(self, expr):
        if kconfiglib.expr_value(expr) == YES:
            return True
        if isinstance(expr, kconfiglib.Symbol):
            return not expr.is_constant and self.enable(expr)
        if isinstance(expr, kconfiglib.Choice) or expr[0] == kconfiglib.NOT:
            return False
        if expr[0] == kconfiglib.AND:
            return self.satisfy(expr[1]) and self.satisfy(expr[2])
        if expr[0] == kconfiglib.OR:
            # COMPILE_TEST first, as 0-day builds other architectures' drivers
            branches = sorted(split_or(expr), key=lambda e: "COMPILE_TEST" not in kconfiglib.expr_str(e))
            return any(self.attempt(b) for b in branches)
        return False   # comparisons (A = B, A > 3): not solved here


def split_or(expr):
    if isinstance(expr, tuple) and expr[0] == kconfiglib.OR:
        return split_or(expr[1]) + split_or(expr[2])
    return [expr]


def required(expr):
    """The symbols that must all be y for expr to be: through && only (an || may go either way)."""
    if isinstance(expr, kconfiglib.Symbol):
        return [] if expr.is_constant else [expr]
    if isinstance(expr, tuple) and expr[0] == kconfiglib.AND:
        return required(expr[1]) + required(expr[2])
    return []


class Definitions:
    """Where the tree's Kconfig files define each symbol, read once when first asked."""

    def __init__(self):
        self.where = None

    def arches(self, name):
        """The architectures (arch/X/) that alone define name; None when it is defined
        elsewhere too, or nowhere."""
        if self.where is None:
            self.where = {}
            define = re.compile(r"^\s*(?:menu)?config\s+(\w+)\s*$", re.M)
            for top, dirs, files in os.walk("."):
                dirs[:] = [d for d in dirs if not d.startswith(".")]
                for f in files:
                    if not f.startswith("Kconfig"):
                        continue
                    path = os.path.join(top, f)
                    parts = path.split(os.sep)
                    arch = parts[2] if len(parts) > 3 and parts[1] == "arch" else None
                    with open(path, errors="replace") as fh:
                        for m in define.finditer(fh.read()):
                            self.where.setdefault(m.group(1), set()).add(arch)
        places = self.where.get(name)
        if not places or None in places:
            return None
        return sorted(places)


def only_on(sym, defs, seen=None):
    """(symbol, architectures) when sym needs, through its && dependencies, a symbol this
    architecture's Kconfig never defines and only those architectures' do; else None."""
    seen = seen if seen is not None else set()
    for dep in required(sym.direct_dep):
        if dep in seen:
            continue
        seen.add(dep)
        if not dep.nodes:
            arches = defs.arches(dep.name)
            if arches:
                return dep.name, arches
        elif dep.tri_value != YES:
            bound = only_on(dep, defs, seen)
            if bound:
                return bound
    return None


def main(argv):
    if len(argv) < 3:
        sys.stderr.write("usage: kconfig-enable.py OUT CONFIG WANT...\n")
        return 2
    out, config, wants = argv[0], argv[1], argv[2:]
    kconf = kconfiglib.Kconfig("Kconfig", warn=False)
    kconf.load_config(config)
    solver = Solver(kconf)
    defs = Definitions()
    lines = []
    for group in wants:
        names = [n for n in group.split("|") if n]
        syms = [kconf.syms[n] for n in names if n in kconf.syms]
        if any(s.tri_value == YES for s in syms):
            continue
        if not syms:
            lines.append("# cannot: %s: no such symbol in this tree's Kconfig" % group)
        elif not any(solver.attempt(s) for s in syms):
            why = "; ".join("CONFIG_%s depends on %s" % (s.name, kconfiglib.expr_str(s.direct_dep))
                            for s in syms)
            lines.append("# cannot: %s: %s" % (group, why))
            bound = [only_on(s, defs) for s in syms]
            if all(bound):
                needs = sorted({b[0] for b in bound})
                arches = sorted({a for b in bound for a in b[1]})
                lines.append("# only-on: %s: %s: %s" % (group, " ".join(needs), " ".join(arches)))
    with open(out, "w") as f:
        for sym in solver.order:
            f.write("CONFIG_%s=y\n" % sym.name)
        for line in lines:
            f.write(line + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
