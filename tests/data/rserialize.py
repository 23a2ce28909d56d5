"""A small reader of R's serialization format (XDR, versions 2 and 3) and of R
lazy-load databases (data/Rdata.rdx + data/Rdata.rdb), stdlib only.

Format: R Internals §1.8 "Serialization Formats" and src/main/serialize.c. Each item
starts with a 32-bit flags word: type = flags & 0xFF, is-object bit 8, has-attributes
bit 9, has-tag bit 10, gp levels in bits 12..27. Vectors are a length then big-endian
payload, their attributes (a pairlist) after the payload; pairlists read attributes,
tag, car, then cdr. Symbols, environments and persistent names enter a reference
table that REFSXP items index (1-based). ALTREP items carry (class info, state,
attributes); the compact sequences and wrappers that R writes are expanded here.

A lazy-load database is an index (Rdata.rdx: gzip'd serialization of
list(variables=, references=, compressed=)) of (offset, length) pairs into Rdata.rdb,
whose chunks are a 4-byte big-endian uncompressed length then a zlib stream (or, when
compressed is 2 or 3, one type byte then bzip2 or xz data).
"""

import bz2
import gzip
import lzma
import struct
import zlib

# SEXP types (Rinternals.h) and the pseudo-types of serialize.c.
NILSXP, SYMSXP, LISTSXP, CLOSXP, ENVSXP, PROMSXP, LANGSXP = 0, 1, 2, 3, 4, 5, 6
SPECIALSXP, BUILTINSXP, CHARSXP, LGLSXP, INTSXP, REALSXP, CPLXSXP = 7, 8, 9, 10, 13, 14, 15
STRSXP, DOTSXP, VECSXP, EXPRSXP, BCODESXP, EXTPTRSXP, WEAKREFSXP = 16, 17, 19, 20, 21, 22, 23
RAWSXP, S4SXP = 24, 25
REFSXP, NILVALUE_SXP, GLOBALENV_SXP, UNBOUNDVALUE_SXP, MISSINGARG_SXP = 255, 254, 253, 252, 251
BASENAMESPACE_SXP, NAMESPACESXP, PACKAGESXP, PERSISTSXP = 250, 249, 248, 247
EMPTYENV_SXP, BASEENV_SXP, ATTRLANGSXP, ATTRLISTSXP, ALTREP_SXP = 242, 241, 240, 239, 238

NA_INTEGER = -2147483648


class RError(Exception):
    pass


class RObject:
    """An R value: type code, payload (list / str / bytes / None) and attributes."""

    def __init__(self, rtype, value=None, attributes=None):
        self.rtype = rtype
        self.value = value
        self.attributes = attributes or {}

    def attr(self, name):
        return self.attributes.get(name)

    def classes(self):
        c = self.attr("class")
        return list(c.value) if c is not None else []

    def names(self):
        n = self.attr("names")
        return list(n.value) if n is not None else []

    def __repr__(self):
        v = self.value
        if isinstance(v, list) and len(v) > 6:
            v = "%s ... (%d)" % (v[:3], len(v))
        return "RObject(type=%d, %r, attrs=%s)" % (self.rtype, v, list(self.attributes))


class Symbol(str):
    pass


class Environment:
    def __init__(self):
        self.frame = {}
        self.enclos = None
        self.attributes = {}


class Reader:
    def __init__(self, data, persistent_hook=None):
        self.data = data
        self.pos = 0
        self.refs = []
        self.hook = persistent_hook

    def _take(self, n):
        if self.pos + n > len(self.data):
            raise RError("truncated stream at byte %d (need %d more)" % (self.pos, n))
        b = self.data[self.pos:self.pos + n]
        self.pos += n
        return b

    def int(self):
        return struct.unpack(">i", self._take(4))[0]

    def length(self):
        n = self.int()
        if n == -1:  # long vector: two 32-bit halves
            hi, lo = self.int(), self.int()
            n = (hi << 32) + (lo & 0xFFFFFFFF)
        return n

    def header(self):
        fmt = self._take(2)
        if fmt != b"X\n":
            raise RError("only the XDR format is supported, got %r" % fmt)
        version = self.int()
        self.int()  # R version that wrote it
        self.int()  # minimal R version to read it
        if version == 3:
            self._take(self.int())  # native encoding name
        elif version != 2:
            raise RError("unsupported serialization version %d" % version)
        return version

    def read(self):
        self.header()
        return self.item()

    def _pairlist(self, flags, rtype):
        # Iterative over cdr chains so long pairlists do not exhaust the stack.
        items = []
        while True:
            attrs = self._attributes() if flags & (1 << 9) else {}
            tag = self.item() if flags & (1 << 10) else None
            car = self.item()
            items.append((tag, car, attrs))
            flags = self.int()
            t = flags & 0xFF
            if t == NILVALUE_SXP:
                break
            if t not in (LISTSXP, LANGSXP, ATTRLISTSXP, ATTRLANGSXP, DOTSXP, CLOSXP, PROMSXP):
                cdr = self.item(flags)
                items.append((None, cdr, {}))
                break
        return RObject(rtype, items)

    def _attributes(self):
        pl = self.item()
        out = {}
        if isinstance(pl, RObject) and pl.rtype in (LISTSXP, ATTRLISTSXP):
            for tag, car, _ in pl.value:
                out[str(tag)] = car
        return out

    def item(self, flags=None):
        if flags is None:
            flags = self.int()
        t = flags & 0xFF
        has_attr = flags & (1 << 9)
        if t == NILVALUE_SXP:
            return None
        if t in (EMPTYENV_SXP, BASEENV_SXP, GLOBALENV_SXP, UNBOUNDVALUE_SXP,
                 MISSINGARG_SXP, BASENAMESPACE_SXP):
            return RObject(t)
        if t == REFSXP:
            i = flags >> 8
            if i == 0:
                i = self.int()
            if not 1 <= i <= len(self.refs):
                raise RError("reference %d outside the table of %d" % (i, len(self.refs)))
            return self.refs[i - 1]
        if t == PERSISTSXP:
            names = self._string_vec()
            obj = self.hook(names) if self.hook else RObject(PERSISTSXP, names)
            self.refs.append(obj)
            return obj
        if t == SYMSXP:
            sym = Symbol(self.item())
            self.refs.append(sym)
            return sym
        if t in (PACKAGESXP, NAMESPACESXP):
            obj = RObject(t, self._string_vec())
            self.refs.append(obj)
            return obj
        if t == ENVSXP:
            self.int()  # locked
            env = Environment()
            self.refs.append(env)
            env.enclos = self.item()
            frame = self.item()
            hashtab = self.item()
            env.attributes = self._attr_from(self.item())
            for chain in ([frame] + (hashtab.value if isinstance(hashtab, RObject)
                                     and isinstance(hashtab.value, list) else [])):
                if isinstance(chain, RObject) and chain.rtype == LISTSXP:
                    for tag, car, _ in chain.value:
                        env.frame[str(tag)] = car
            return env
        if t in (LISTSXP, LANGSXP, CLOSXP, PROMSXP, DOTSXP, ATTRLISTSXP, ATTRLANGSXP):
            return self._pairlist(flags, t)
        if t == ALTREP_SXP:
            info = self.item()
            state = self.item()
            attrs = self._attr_from(self.item())
            obj = self._altrep(info, state)
            obj.attributes = attrs
            return obj
        if t == S4SXP:
            obj = RObject(S4SXP)
        elif t == CHARSXP:
            n = self.int()
            return None if n == -1 else self._take(n).decode("utf-8", "replace")
        elif t in (LGLSXP, INTSXP):
            n = self.length()
            obj = RObject(t, list(struct.unpack(">%di" % n, self._take(4 * n))))
        elif t == REALSXP:
            n = self.length()
            obj = RObject(t, list(struct.unpack(">%dd" % n, self._take(8 * n))))
        elif t == CPLXSXP:
            n = self.length()
            v = struct.unpack(">%dd" % (2 * n), self._take(16 * n))
            obj = RObject(t, [complex(v[2 * i], v[2 * i + 1]) for i in range(n)])
        elif t in (STRSXP, VECSXP, EXPRSXP):
            n = self.length()
            obj = RObject(t, [self.item() for _ in range(n)])
        elif t == RAWSXP:
            obj = RObject(t, self._take(self.length()))
        elif t in (SPECIALSXP, BUILTINSXP):
            return RObject(t, self._take(self.int()).decode())
        elif t == EXTPTRSXP:
            obj = RObject(t)
            self.refs.append(obj)
            self.item()
            self.item()
        elif t == WEAKREFSXP:
            obj = RObject(t)
            self.refs.append(obj)
        else:
            raise RError("unsupported SEXP type %d at byte %d" % (t, self.pos - 4))
        if has_attr:
            obj.attributes = self._attributes()
        return obj

    def _attr_from(self, pl):
        out = {}
        if isinstance(pl, RObject) and pl.rtype in (LISTSXP, ATTRLISTSXP):
            for tag, car, _ in pl.value:
                out[str(tag)] = car
        return out

    def _string_vec(self):
        if self.int() != 0:
            raise RError("bad string vector prefix")
        return [self.item() for _ in range(self.int())]

    def _altrep(self, info, state):
        cls = str(info.value[0][1]) if isinstance(info, RObject) else "?"
        if cls in ("compact_intseq", "compact_realseq"):
            n, start, inc = state.value[:3]
            seq = [start + inc * i for i in range(int(n))]
            if cls == "compact_intseq":
                return RObject(INTSXP, [int(x) for x in seq])
            return RObject(REALSXP, seq)
        if cls.startswith("wrap_"):
            inner = state.value[0]
            return RObject(inner.rtype, inner.value)
        if cls == "deferred_string":
            arg = state.value[0][1]
            return RObject(STRSXP, [_format_num(x, arg.rtype) for x in arg.value])
        raise RError("unsupported ALTREP class %s" % cls)


def _format_num(x, rtype):
    if rtype == INTSXP:
        return None if x == NA_INTEGER else str(x)
    return repr(x)


def unserialize(data, persistent_hook=None):
    return Reader(data, persistent_hook).read()


def _decompress_chunk(chunk, compressed):
    if len(chunk) < 4:
        raise RError("lazy-load chunk shorter than its length prefix")
    expect = struct.unpack(">I", chunk[:4])[0]
    body = chunk[4:]
    if compressed in (True, 1):
        out = zlib.decompress(body)
    elif compressed in (2, 3):
        kind = body[:1]
        if kind == b"0":
            out = body[1:]
        elif kind == b"2":
            out = bz2.decompress(body[1:])
        elif kind == b"Z":
            out = lzma.decompress(body[1:])
        elif kind == b"1":
            out = zlib.decompress(body[1:])
        else:
            raise RError("unknown chunk compression %r" % kind)
    else:
        out = body
    if len(out) != expect:
        raise RError("chunk inflated to %d bytes, header says %d" % (len(out), expect))
    return out


def lazy_load(rdx_path, rdb_path):
    """Returns {name: RObject} for every variable of a lazy-load database."""
    index = unserialize(gzip.open(rdx_path).read())
    fields = dict(zip(index.names(), index.value))
    comp = fields.get("compressed")
    compressed = comp.value[0] if comp is not None else 1
    with open(rdb_path, "rb") as f:
        rdb = f.read()

    def fetch(key):
        off, n = int(key.value[0]), int(key.value[1])
        return _decompress_chunk(rdb[off:off + n], compressed)

    refs = fields.get("references")
    ref_keys = dict(zip(refs.names(), refs.value)) if refs is not None and refs.value else {}
    env_cache = {}

    def hook(names):
        # Persistent names point at environments stored under "references".
        name = names[0]
        if name not in env_cache:
            env_cache[name] = Environment()
            if name in ref_keys:
                obj = unserialize(fetch(ref_keys[name]), hook)
                env_cache[name].frame = {"__data__": obj}
        return env_cache[name]

    variables = fields["variables"]
    out = {}
    for name, key in zip(variables.names(), variables.value):
        out[name] = unserialize(fetch(key), hook)
    return out
