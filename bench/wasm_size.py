"""What is in a wasm (bench/wasm_size.sh): sections, code per crate and per module of this
crate, the biggest data segments, and the text the build embeds. Raw and gzip -9 KiB; a group's
gzip figure is that group compressed alone.

    python3 bench/wasm_size.py NAMED.wasm [CHAPTERS_GEN.rs] [ROWS]

NAMED.wasm must keep its name section (wasm-opt -g): function bodies are grouped by name."""
import collections
import gzip
import re
import sys

wasm = open(sys.argv[1], 'rb').read()
gen = sys.argv[2] if len(sys.argv) > 2 and sys.argv[2] else None
ROWS = int(sys.argv[3]) if len(sys.argv) > 3 else 20
SECTION = {0: 'custom', 1: 'type', 2: 'import', 3: 'function', 4: 'table', 5: 'memory', 6: 'global',
           7: 'export', 8: 'start', 9: 'elem', 10: 'code', 11: 'data', 12: 'datacount'}


def leb(i):
    r = s = 0
    while True:
        x = wasm[i]
        i += 1
        r |= (x & 127) << s
        s += 7
        if not x & 128:
            return r, i


def kib(blob):
    return f'{len(blob) / 1024:9.1f} {len(gzip.compress(blob, 9)) / 1024:9.1f}'


def row(label, blob):
    print(f'{label[:60]:60} {kib(blob)}')


def head(title):
    print(f'\n{title[:60]:60} {"raw KiB":>9} {"gz KiB":>9}')


sections, pos = [], 8
while pos < len(wasm):
    sid = wasm[pos]
    n, p = leb(pos + 1)
    sections.append((sid, p, n))
    pos = p + n

imported_fns, bodies, datas, fnames, dnames = 0, [], [], {}, {}
for sid, p, n in sections:
    if sid == 2:
        count, i = leb(p)
        for _ in range(count):
            for _ in range(2):
                ln, i = leb(i)
                i += ln
            kind = wasm[i]
            i += 1
            if kind == 0:
                _, i = leb(i)
                imported_fns += 1
            elif kind in (1, 2):
                if kind == 1:
                    i += 1
                flags = wasm[i]
                _, i = leb(i + 1)
                if flags & 1:
                    _, i = leb(i)
            elif kind == 3:
                i += 2
            elif kind == 4:
                _, i = leb(i + 1)
    elif sid == 10:
        count, i = leb(p)
        for _ in range(count):
            size, j = leb(i)
            bodies.append(wasm[i:j + size])
            i = j + size
    elif sid == 11:
        count, i = leb(p)
        for _ in range(count):
            flags, i = leb(i)
            if flags != 1:
                if flags == 2:
                    _, i = leb(i)
                while wasm[i] != 0x0b:
                    i += 1
                i += 1
            size, i = leb(i)
            datas.append(wasm[i:i + size])
            i += size
    elif sid == 0:
        ln, i = leb(p)
        if wasm[i:i + ln] != b'name':
            continue
        i += ln
        while i < p + n:
            sub = wasm[i]
            size, i = leb(i + 1)
            if sub in (1, 9):
                count, k = leb(i)
                for _ in range(count):
                    idx, k = leb(k)
                    ln, k = leb(k)
                    (fnames if sub == 1 else dnames)[idx] = wasm[k:k + ln].decode('utf-8', 'replace')
                    k += ln
            i += size

STD = {'std', 'core', 'alloc', 'f32', 'f64', 'str', 'char', 'bool', 'u8', 'u16', 'u32', 'u64', 'usize', 'i8',
       'i16', 'i32', 'i64', 'isize', 'u128', 'i128', 'compiler_builtins', 'dlmalloc'}
BINDGEN = {'wasm_bindgen', 'js_sys', 'web_sys', 'wasm_bindgen_futures'}


def crate_of(name):
    """The crate that defines a function: `<T as tr::Trait>::f` goes to the trait's crate,
    `drop_in_place<X>` to X's."""
    m = re.match(r'core::ptr::drop_in_place<(.*)>', name)
    n = m.group(1) if m else name
    n = re.sub(r'^[<&*(\[ ]+|^(mut|dyn|const|impl) ', '', n)
    n = re.sub(r'^[<&*(\[ ]+|^(mut|dyn|const|impl) ', '', n)
    first = re.match(r'[A-Za-z_][A-Za-z0-9_]*', n)
    first = first.group(0) if first else '?'
    if first[:1].isupper() or first in STD - {'std', 'core', 'alloc', 'compiler_builtins', 'dlmalloc'}:
        trait = re.search(r' as ([a-z_][a-z0-9_]*)::', name)
        first = trait.group(1) if trait else ('std' if first in STD else '(generic)')
    if first in STD:
        return 'std/core/alloc'
    if first in BINDGEN or first.startswith(('__wbg', '__wbindgen', '__externref')):
        return 'wasm_bindgen/js_sys/web_sys'
    if re.match(r'^(func|code)\[?\d', name) or first == '?':
        return '(unnamed)'
    return first


def module_of(name):
    m = re.search(r'attention_live::([a-z0-9_]+)(?:::([a-z0-9_]+))?', name)
    if not m:
        return None
    top, sub = m.group(1), m.group(2)
    return f'{top}::{sub}' if sub and top in ('demos', 'ui', 'kit', 'chapters', 'exercises', 'gpt2') else top


by_crate, by_module = collections.defaultdict(list), collections.defaultdict(list)
for k, body in enumerate(bodies):
    name = fnames.get(imported_fns + k, f'code[{k}]')
    crate = crate_of(name)
    by_crate[crate].append(body)
    if crate == 'attention_live':
        by_module[module_of(name) or '(crate root)'].append(body)


def table(title, groups):
    head(title)
    ranked = sorted(((sum(map(len, v)), k, b''.join(v)) for k, v in groups.items()), reverse=True)
    for _, k, blob in ranked[:ROWS]:
        row(k, blob)
    rest = b''.join(r[2] for r in ranked[ROWS:])
    if rest:
        row(f'({len(ranked) - ROWS} more)', rest)


head('whole file and sections')
row('whole file', wasm)
for sid, p, n in sections:
    label = SECTION.get(sid, str(sid))
    if sid == 0:
        ln, i = leb(p)
        label += ' ' + wasm[i:i + ln].decode('utf-8', 'replace')
    row(label, wasm[p:p + n])
table('code by defining crate', by_crate)
table('code of attention_live by module (its own functions)', by_module)

head('largest data segments (first printable text)')
for n, k, d in sorted(((len(d), k, d) for k, d in enumerate(datas)), reverse=True)[:8]:
    text = re.sub(r'[^\x20-\x7e]+', ' ', d.decode('utf-8', 'replace').encode('ascii', 'replace').decode())
    row(f'{dnames.get(k, k)}: {text.strip()[:40]}', d)

if gen:
    src = open(gen, encoding='utf-8').read()
    literal = re.compile(r'"((?:[^"\\]|\\.)*)"', re.S)

    def unescape(s):
        s = re.sub(r'\\u\{([0-9a-fA-F]+)\}', lambda m: chr(int(m.group(1), 16)), s)
        return re.sub(r'\\(.)', lambda m: {'n': '\n', 't': '\t', 'r': '\r'}.get(m.group(1), m.group(1)), s)

    groups = collections.OrderedDict()
    parts = re.split(r'^pub static (\w+)', src, flags=re.M)
    for i in range(1, len(parts), 2):
        name, body = parts[i], parts[i + 1]
        if name in ('CHAPTERS', 'REFERENCE_PAGES'):
            for m in re.finditer(r'Segment::Html\("((?:[^"\\]|\\.)*)"\)', body):
                groups.setdefault(f'{name}: prose HTML and MathML', []).append(unescape(m.group(1)))
            for m in re.finditer(r'Segment::Exercise\(&(.*?)\),(?=Segment::|\]\))', body, re.S):
                groups.setdefault('exercises: every text (HTML and MathML)', []).extend(
                    unescape(x.group(1)) for x in literal.finditer(m.group(1)))
        else:
            groups.setdefault(name, []).extend(unescape(x.group(1)) for x in literal.finditer(body))
    head(f'text the build embeds ({gen.split("/")[-1]})')
    total = b''
    for name, texts in groups.items():
        blob = ''.join(texts).encode()
        total += blob
        row(name, blob)
    row('all of it', total)
