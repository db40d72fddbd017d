#!/usr/bin/env python3
"""Differential check of poot's Jinja semantics against Python jinja2.

Each case is a small template (and variables); it is rendered by jinja2 set up
as transformers does and by `poot template`; the bytes must match, or both
must fail. Exit 0 all match, 1 a mismatch, 77 skipped.
"""
import json
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from template_ref import BOS, EOS, NOW, jinja_render, make_env  # noqa: E402

V = {
    "xs": [3, 1, 2],
    "words": ["b", "A", "c", "a"],
    "d": {"b": 2, "a": 1, "C": [1, {"x": "y"}]},
    "msgs": [{"role": "system", "content": "S"}, {"role": "user", "content": "U1"},
             {"role": "assistant", "content": "A1"}, {"role": "user", "content": "U2"}],
    "s": "  Hello, World  ",
    "u": "héllo wörld ß ÇA",
    "n": None,
    "t": True,
    "f": 1.5,
    "i": 7,
    "tools": [{"type": "function", "function": {"name": "get", "parameters": {"q": "é"}}},
              {"type": "code_interpreter"}],
    "emptyl": [],
    "emptys": "",
}

CASES = [
    # literals and printing
    "{{ 1 }}|{{ -1 }}|{{ 1.0 }}|{{ 1e3 }}|{{ 0.1 + 0.2 }}|{{ 1e16 }}|{{ 1.5e-7 }}|{{ 123456789.123 }}",
    "{{ true }}|{{ false }}|{{ none }}|{{ True }}|{{ None }}",
    "{{ 'a' 'b' }}|{{ \"q\\\"\" }}|{{ 'x\\ny' }}|{{ '\\u00e9\\x41\\t|' }}",
    "{{ [1, 'a', none, true, 1.5] }}|{{ (1,) }}|{{ (1, 2) }}|{{ () }}|{{ {'a': [1]} }}",
    "{{ \"it's\" }}|{{ [\"it's\", 'say \"hi\"', \"both ' \\\"\"] }}",
    "{{ ['é', '\\n', '\\x01', '\\u200b'] }}",
    "{{ xs }}|{{ d }}|{{ n }}|{{ t }}|{{ f }}|{{ msgs[0] }}",
    # arithmetic
    "{{ 7 // 2 }} {{ -7 // 2 }} {{ 7 % 3 }} {{ -7 % 3 }} {{ 7 % -3 }} {{ 7.5 // 2 }} {{ -7.5 % 2 }}",
    "{{ 2 ** 10 }} {{ 2 ** -1 }} {{ 2 ** 0.5 }} {{ 10 / 4 }} {{ 10 / 5 }} {{ 3 * 'ab' }} {{ [1] * 3 }}",
    "{{ 1 + 2 * 3 - 4 / 2 }} {{ (1 + 2) * 3 }} {{ 2 ** 3 ** 2 }} {{ -2 ** 2 }} {{ true + 1 }}",
    "{{ 'a' + 'b' }} {{ [1] + [2] }} {{ 'a' ~ 1 ~ none ~ true ~ 1.0 ~ undefined_var }}",
    "{{ 1 / 0 }}",
    "{{ 'a' + 1 }}",
    "{{ 'a' < 1 }}",
    "{{ '%s and %d' % ('x', 3) }}|{{ '%05.1f' % 2.25 }}|{{ '%r' % 'q' }}|{{ '%s' % [1] }}",
    # comparisons and logic
    "{{ 1 == 1.0 }} {{ 1 != 2 }} {{ 'a' < 'b' }} {{ [1, 2] < [1, 3] }} {{ 1 < 2 < 3 }} {{ 3 > 2 > 2 }}",
    "{{ 1 in xs }} {{ 5 not in xs }} {{ 'ell' in 'hello' }} {{ 'a' in d }} {{ 'z' in undefined_var }}",
    "{{ 0 or 'x' }}|{{ '' or [] }}|{{ 1 and 2 }}|{{ 0 and 1/0 }}|{{ not 0 }}|{{ not none }}|{{ n or 'def' }}",
    "{{ 'yes' if t else 'no' }}|{{ 'yes' if n }}|{{ 'a' if false else 'b' if false else 'c' }}",
    "{{ undefined_var == undefined_var }} {{ undefined_var == none }} {{ none == none }} {{ undefined_var is none }}",
    # tests
    "{{ x is defined }} {{ xs is defined }} {{ n is none }} {{ n is defined }} {{ d.zz is undefined }}",
    "{{ 's' is string }} {{ 1 is number }} {{ 1.5 is number }} {{ true is number }} {{ 1 is integer }} {{ 1.0 is float }}",
    "{{ d is mapping }} {{ xs is mapping }} {{ xs is iterable }} {{ 's' is iterable }} {{ 1 is iterable }} {{ undefined_var is iterable }}",
    "{{ xs is sequence }} {{ 's' is sequence }} {{ d is sequence }} {{ 1 is sequence }} {{ none is sequence }}",
    "{{ t is boolean }} {{ 1 is boolean }} {{ t is true }} {{ 1 is true }} {{ false is false }} {{ 0 is false }}",
    "{{ 4 is even }} {{ 3 is odd }} {{ 9 is divisibleby 3 }} {{ 9 is divisibleby(4) }} {{ 3 is eq 3 }} {{ 3 is equalto(4) }}",
    "{{ 'ab' is lower }} {{ 'AB' is upper }} {{ 'aB' is lower }} {{ 2 is in xs }} {{ 2 is gt 1 }} {{ 2 is ge 3 }} {{ 1 is lt 2 }} {{ n is sameas none }}",
    "{{ xs is not string }} {{ not xs is string }} {{ x is not defined and true }}",
    "{{ msgs[0].role is defined }} {{ msgs[0].zz is defined }} {{ msgs[0]['content'] is string }}",
    # attribute and item access
    "{{ d.a }}|{{ d['b'] }}|{{ d.C[1].x }}|{{ d.C.1.x }}|{{ d.nope }}|{{ xs[-1] }}|{{ xs[10] }}|{{ 'abc'[1] }}|{{ n.attr }}",
    "{{ undefined_var.attr }}",
    "{{ undefined_var[0] }}",
    "{{ d.items is defined }}{{ d.items is callable }}",
    "{{ xs[1:] }}|{{ xs[:-1] }}|{{ xs[::-1] }}|{{ xs[::2] }}|{{ 'héllo'[1:3] }}|{{ 'hello'[::-2] }}|{{ xs[5:9] }}|{{ xs[-10:2] }}",
    "{{ d.get('a') }}|{{ d.get('zz') }}|{{ d.get('zz', 'dflt') }}|{{ d.keys() | list }}|{{ d.values() | list }}|{{ d.items() | list }}",
    "{% for k, v in d.items() %}{{ k }}={{ v }};{% endfor %}",
    "{{ xs.append }}|{{ d.__class__ }}|{{ d._private }}",
    "{{ xs.append(4) }}",
    "{{ d.update({}) }}",
    # string methods
    "[{{ s.strip() }}][{{ s.lstrip() }}][{{ s.rstrip() }}][{{ 'xxaxx'.strip('x') }}][{{ '\\n a \\t'.strip() }}]",
    "{{ 'a,b,,c'.split(',') }}|{{ ' a  b c '.split() }}|{{ 'a b c'.split(' ', 1) }}|{{ 'a,b,c'.rsplit(',', 1) }}|{{ 'a\\nb\\r\\nc'.splitlines() }}",
    "{{ 'Hello'.startswith('He') }} {{ 'Hello'.endswith(('x', 'lo')) }} {{ 'hello world'.title() }} {{ \"they're bill's\".title() }}",
    "{{ 'aaa'.replace('a', 'b') }}|{{ 'aaa'.replace('a', 'b', 2) }}|{{ 'ab'.replace('', '-') }}|{{ u.upper() }}|{{ u.lower() }}|{{ 'hELLO wORLD'.capitalize() }}",
    "{{ '{} and {}'.format(1, 'x') }}|{{ '{0}{1}{0}'.format('a', 'b') }}|{{ '{name}!'.format(name='N') }}|{{ '{{x}}'.format() }}|{{ '{:>5}|{:<4}|{:^6}'.format('a', 'b', 'c') }}|{{ '{:.2f}'.format(3.14159) }}|{{ '{:03d}'.format(7) }}",
    "{{ 'hello'.find('l') }} {{ 'hello'.rfind('l') }} {{ 'hello'.count('l') }} {{ '-'.join(['a', 'b']) }} {{ '12'.isdigit() }} {{ 'ab'.isalpha() }}",
    # filters
    "{{ s | trim }}|{{ 'xxhixx' | trim('x') }}|{{ xs | length }}|{{ 'héllo' | length }}|{{ d | count }}|{{ undefined_var | length }}",
    "{{ 'abc' | upper }}|{{ 'ABC' | lower }}|{{ 'hello world' | capitalize }}|{{ 'hello big-world (x)' | title }}|{{ u | upper }}",
    "{{ 'aXbX' | replace('X', '-') }}|{{ 'aXbX' | replace('X', '-', 1) }}|{{ none | replace('o', '0') }}",
    "{{ xs | join(', ') }}|{{ xs | join }}|{{ msgs | join('/', attribute='role') }}|{{ [1, none, 'a'] | join('-') }}",
    "{{ undefined_var | default('dflt') }}|{{ none | default('dflt') }}|{{ '' | default('dflt') }}|{{ '' | default('dflt', true) }}|{{ 0 | d(5, boolean=true) }}",
    "{{ d | items | list }}|{{ undefined_var | items | list }}|{{ xs | first }}|{{ xs | last }}|{{ emptyl | first }}|{{ 'abc' | list }}|{{ d | list }}",
    "{{ msgs | selectattr('role', 'equalto', 'user') | map(attribute='content') | list }}|{{ msgs | rejectattr('role', 'eq', 'user') | list | length }}",
    "{{ tools | selectattr('type', 'defined') | list | length }}|{{ msgs | selectattr('missing') | list }}|{{ n | selectattr('x') | list }}",
    "{{ xs | select('odd') | list }}|{{ xs | reject('odd') | list }}|{{ words | map('upper') | list }}|{{ xs | map('string') | join }}",
    "{{ msgs | map(attribute='nope', default='?') | list }}|{{ tools | map(attribute='function.name') | list }}",
    "{{ '42' | int }} {{ '4.7' | int }} {{ 'x' | int }} {{ 'x' | int(9) }} {{ 3.9 | int }} {{ '0x1A' | int(0, 16) }} {{ ' 12 ' | int }} {{ '1_000' | int }}",
    "{{ '4.5' | float }} {{ 'x' | float }} {{ 3 | float }} {{ 2.5 | round }} {{ 3.5 | round }} {{ 2.675 | round(2) }} {{ 2.1 | round(0, 'ceil') }} {{ 2.9 | round(method='floor') }} {{ 5 | round }}",
    "{{ -3 | abs }} {{ -2.5 | abs }} {{ xs | sort | list }} {{ xs | sort(reverse=true) }} {{ words | sort }} {{ words | sort(case_sensitive=true) }}",
    "{{ msgs | sort(attribute='role') | map(attribute='content') | join(',') }}|{{ words | unique | list }}|{{ words | unique(case_sensitive=true) | list }}",
    "{{ d | dictsort }}|{{ d | dictsort(true) }}|{{ {'b': 1, 'a': 2} | dictsort(by='value') }}|{{ {'b': 1, 'a': 2} | dictsort(reverse=true) }}",
    "{{ xs | min }} {{ xs | max }} {{ words | min }} {{ xs | sum }} {{ 'abc' | reverse }} {{ xs | reverse | list }}",
    "{{ 'line1\\nline2\\n\\nline4' | indent }}|{{ 'a\\nb' | indent(2, true) }}|{{ 'a\\n\\nb' | indent(2, blank=true) }}|{{ 'a\\nb' | indent('> ') }}",
    "{{ 3 | string }}|{{ xs | string }}|{{ n | string }}|{{ 'x' | safe }}|{{ ('<a>' | safe) + '<b>' }}|{{ '<a>' | e }}",
    "{{ xs | tojson }}|{{ d | tojson }}|{{ tools | tojson }}|{{ 'é\"\\n\\u2028' | tojson }}|{{ none | tojson }}|{{ 1.0 | tojson }}|{{ {1: 2, true: 3} | tojson }}",
    "{{ tools | tojson(indent=2) }}|{{ d | tojson(indent=4) }}|{{ emptyl | tojson(indent=2) }}",
    "{{ tools | tojson(ensure_ascii=true) }}|{{ d | tojson(sort_keys=true) }}|{{ d | tojson(separators=(',', ':')) }}|{{ '😀' | tojson(ensure_ascii=True) }}",
    "{{ undefined_var | tojson }}",
    "{{ 'a%sb' | format('X') }}|{{ 'hello world foo' | wordcount }}",
    "{{ xs | nosuchfilter }}",
    "{% if false %}{{ xs | nosuchfilter }}{% endif %}ok",
    # whitespace control
    "a\n  {# c #}  \n  {%- if true %} x{% endif %}\n\t{{ 'v' }}\n  {% if true %}{% endif %}  tail",
    "{% if true %}\n\n{% endif %}|{% if true -%}\n\n  {%- endif %}|\n    {%- set q = 1 %}\n",
    "<{%- for m in msgs -%}\n  {{ m.role }}\n{%- endfor %}>",
    "{{ '{{' }}{{ '}}' }}{{ {'a': {'b': 1}} }}{{ \"%}\" }}",
    "a  {% if true %}  b  {% endif %}  c",
    "a\n  {% if true %}\n  b\n  {% endif %}\nc\n",
    "a\n  {%- if true -%}\n  b\n  {%- endif -%}\n  c",
    "a\n  {%+ if true +%}\n  b\n  {% endif %}\nc",
    "x  {{- 1 -}}  y {{ 2 }}\n z",
    "  {# comment #}\nafter\n  {#- c2 -#}  z",
    "{% raw %}{{ not processed }}{% endraw %}|{%- raw -%}  {{ x }}  {%- endraw -%}|",
    "line1\n    {% for x in xs %}\n    item {{ x }}\n    {% endfor %}\nend",
    "trailing newline kept?\n",
    "crlf\r\nline\r\n{% if true %}\r\nx\r\n{% endif %}\r\n",
    "\t  {% set a = 1 %}\t\n{{ a }}",
    "{{ 'a' }}\n{% if true %}x{% endif %}\n\n{{ 'b' }}",
    # loops
    "{% for x in xs %}{{ loop.index }}{{ loop.index0 }}{{ loop.first }}{{ loop.last }}{{ loop.length }}{{ loop.revindex }}{{ loop.revindex0 }};{% endfor %}",
    "{% for x in xs %}{{ loop.previtem }}-{{ loop.nextitem }};{% endfor %}",
    "{% for x in xs if x > 1 %}{{ x }}{{ loop.index }}{{ loop.length }};{% else %}none{% endfor %}",
    "{% for x in emptyl %}{{ x }}{% else %}empty{% endfor %}|{% for x in undefined_var %}x{% else %}undef{% endfor %}",
    "{% for k in d %}{{ k }}{% endfor %}|{% for c in 'héj' %}[{{ c }}]{% endfor %}",
    "{% for a, b in [(1, 2), (3, 4)] %}{{ a + b }}{% endfor %}|{% for m in msgs %}{{ m.role[0] }}{% endfor %}",
    "{% for x in xs %}{% if x == 1 %}{% break %}{% endif %}{{ x }}{% endfor %}|{% for x in xs %}{% if x == 1 %}{% continue %}{% endif %}{{ x }}{% endfor %}",
    "{% for x in xs %}{{ loop.cycle('a', 'b') }}{% endfor %}|{% for x in [1, 1, 2] %}{{ loop.changed(x) }}{% endfor %}",
    "{% for x in xs %}{% for y in 'ab' %}{{ loop.index }}{{ y }}{% endfor %}{{ loop.index }}|{% endfor %}",
    "{% set tree = [{'n': 'a', 'c': [{'n': 'b', 'c': []}]}] %}{% for node in tree recursive %}{{ node.n }}{{ loop.depth }}({{ loop(node.c) }}){% endfor %}",
    "{% for x in n %}{% endfor %}",
    "{% for i in range(3) %}{{ i }}{% endfor %}|{{ range(2, 10, 3) | list }}|{{ range(5, 0, -2) | list }}|{{ range(0) | list }}",
    "{{ range(1000000) | length }}",
    # scoping
    "{% set x = 1 %}{% for i in xs %}{{ x }}{% set x = i %}{{ x }}{% endfor %}|{{ x }}",
    "{% set x = 9 %}{% for x in xs %}{% endfor %}{{ x }}|{% if true %}{% set y = 2 %}{% endif %}{{ y }}",
    "{% set ns = namespace(found=false, n=0) %}{% for x in xs %}{% if x == 1 %}{% set ns.found = true %}{% endif %}{% set ns.n = ns.n + x %}{% endfor %}{{ ns.found }}{{ ns.n }}{{ ns.missing }}",
    "{% set ns = namespace({'a': 1}) %}{{ ns.a }}|{% set d2 = dict(a=1, b='x') %}{{ d2 }}",
    "{% set a, b = 1, 2 %}{{ a }}{{ b }}|{% set t = (1, 2) %}{% set c, e = t %}{{ c + e }}",
    "{% set x %}block {{ 1 + 1 }}{% endset %}[{{ x }}]|{% set y | upper %}shout{% endset %}{{ y }}",
    "{% set n2 = 1 %}{% set n2.attr = 2 %}",
    "{% with a = 1, b = 2 %}{{ a + b }}{% endwith %}|{{ a }}",
    # macros
    "{% macro m(a, b='d', c=none) %}[{{ a }}|{{ b }}|{{ c }}]{% endmacro %}{{ m(1) }}{{ m(1, 2) }}{{ m(1, c=3) }}{{ m(b=5, a=4) }}",
    "{% macro m() %}{{ varargs }}{{ kwargs }}{% endmacro %}{{ m(1, 2, k=3) }}",
    "{% macro m(a, b=a ~ '!') %}{{ b }}{% endmacro %}{{ m('x') }}",
    "{% macro outer() %}<{{ caller() }}>{% endmacro %}{% call outer() %}inner {{ 1 }}{% endcall %}",
    "{% macro list_items(items) %}{% for i in items %}{{ caller(i) }}{% endfor %}{% endmacro %}{% call(item) list_items(xs) %}[{{ item }}]{% endcall %}",
    "{% macro m() %}{{ z }}{% endmacro %}{% set z = 1 %}{{ m() }}{% set z = 2 %}{{ m() }}",
    "{% macro rec(n) %}{{ n }}{% if n > 0 %}{{ rec(n - 1) }}{% endif %}{% endmacro %}{{ rec(5) }}",
    "{% macro rec(n) %}{{ rec(n + 1) }}{% endmacro %}{{ rec(0) }}",
    "{% macro m(x) %}  {{ x }}  {% endmacro %}[{{ m(1) }}]|{{ m(1) | trim }}",
    "{% macro m(a) %}{{ a }}{% endmacro %}{{ m(1, 2) }}",
    "{% macro m(a) %}{{ a }}{% endmacro %}{{ m(1, b=2) }}",
    "{% macro m(a) %}{{ a }}{% endmacro %}{{ m(1, a=2) }}",
    "{% macro m(a) %}{{ a }}{{ kwargs }}{% endmacro %}{{ m(1, a=2) }}",
    "{% macro m() %}x{% endmacro %}{% call m() %}body{% endcall %}",
    "{% macro m() %}{{ kwargs }}{% endmacro %}{% call m() %}body{% endcall %}",
    "{% macro m() %}[{{ caller }}]{% endmacro %}{{ m() }}",
    "{% macro m(a, b) %}{{ a }}{{ b }}{% endmacro %}{{ m(*[1, 2]) }}{{ m(**{'a': 3, 'b': 4}) }}",
    "{% for i in xs %}{% macro m() %}[{{ i }}]{% endmacro %}{{ m() }}{% endfor %}",
    "{% for i in xs %}{% set y = i %}{% for j in xs if j != y %}{% set z = j %}{{ y }}{{ z }}{% endfor %}{{ z }};{% endfor %}",
    # filter blocks, set blocks
    "{% filter upper %}hello {{ 'x' }}{% endfilter %}|{% filter replace('a', 'b') | upper %}aaa{% endfilter %}",
    "{% generation %}gen {{ 1 }}{% endgeneration %}",
    # globals
    "{{ raise_exception('bad conversation') }}",
    "{% if msgs[0].role != 'user' %}{{ raise_exception('Conversation roles must alternate') }}{% endif %}",
    "{{ strftime_now('%Y-%m-%d %H:%M:%S %B %d, %Y %A %b %j') }}",
    "{{ bos_token }}{{ eos_token }}{{ add_generation_prompt }}{{ tools | length }}{{ documents }}",
    # assorted idioms of real templates
    "{{ 'a\\\\b' }}|{{ \"a\\\"b\" }}|{{ '\\'' }}|{{ 'tab\\there' }}",
    "{{ 'a' if x is defined and x else 'b' }}|{% for m in msgs | reverse %}{{ m.role[0] }}{% endfor %}",
    "{{ msgs | map(attribute='role') | select('equalto', 'user') | list | length }}|{{ xs.0 }}|{{ (1, 2)[0] }}",
    "{{ d.items() | sort }}|{{ 'abc' is in 'xabcx' }}|{{ [1, 2, 3] | sum }}|{{ msgs | max(attribute='content') }}",
    "{{ '%s' | format(none) }}|{{ [[1, 2], [3]] | map('length') | list }}|{{ none is not none }}|{{ 'ab' ~ ['c'] }}",
    "{% set zz = zz | default('d') %}{{ zz }}|{{ [1, 2,] }}|{{ {'a': 1,} }}|{{ 1 if 0 else 2 if 1 else 3 }}",
    "{{ loop.index }}",
    "{{ none < 1 }}",
    "{% macro m(ns) %}{% set ns.v = ns.v + 1 %}{% endmacro %}{% set ns = namespace(v=0) %}{{ m(ns) }}{{ m(ns) }}{{ ns.v }}",
    "  {%- raw %}  r  {% endraw -%}  |\n    {{ 'keep-indent' }}\n  {#- x +#}  y",
    "{% if true %}\n  a\n{%- if true %}\n  b\n{%+ endif %}\n{% endif %}",
    "{{ messages }}{{ tools }}{{ documents }}{{ add_generation_prompt }}",
    "{{ u | title }}|{{ u | capitalize }}|{{ 'ΣΑΣ' | lower }}",
    "{{ '  a  b  '.split(' ') }}|{{ 'a\\tb c'.split() }}|{{ 'x'.join('abc') }}|{{ 'abc'.upper().lower() }}",
    "{{ 0.1 * 3 }}|{{ 1 / 3 }}|{{ 2.0 ** 0.5 }}|{{ 100000000000000000.0 }}|{{ 1e-4 }}|{{ 0.0001234 }}|{{ -0.0 }}|{{ 1e300 * 1e10 }}",
    "{{ 9007199254740993 }}|{{ 2 ** 62 }}|{{ -7 // 2.0 }}|{{ 7 % 2.5 }}|{{ -1 % 5 }}",
    "{{ {'k': 1.0, 'n': none, 't': true, 'l': [1.5e-7, 'é']} | tojson }}|{{ [1e16, 1e-5, 0.5] | tojson }}",
    "{{ '{:99999999999}'.format(1) }}",
    "{{ '%099999999999d' % 1 }}",
    "{{ '%c' % 1114112 }}",
    "{{ xs[::9223372036854775807] }}|{{ xs[::-9223372036854775807] }}|{{ 'héllo'[::-9223372036854775807] }}|{{ 'héllo wörld'[1::3] }}|{{ xs[-9223372036854775807:9223372036854775807] }}",
    "{{ range(-9223372036854775807, 9223372036854775807, 9223372036854775807) | list }}|{{ range(5, -5, -3) | list }}",
    "{{ [1, 1.0, true, 'a', 'A', (1, 2), (1, 2)] | unique | list }}|{{ {'a': 1, 'b': 2, 'c': 3, 'd': 4, 'e': 5, 'f': 6, 'g': 7, 'h': 8, 'i': 9, 'j': 10, 1: 'x', 1.0: 'y'} }}",
    "{% set ns = namespace(d={}) %}{% set big = dict(a0=0, a1=1, a2=2, a3=3, a4=4, a5=5, a6=6, a7=7, a8=8, a9=9, a10=10) %}{{ big.a7 }}{{ big['a10'] }}{{ 'a3' in big }}{{ big.get('a9') }}{{ big | length }}",
    # syntax errors
    "{% if x %}no end",
    "{{ 1 + }}",
    "{% endfor %}",
    "{% unknown_tag %}",
    "{{ x | }}",
    "{% for x in %}{% endfor %}",
    "{% include 'x' %}",
    "{{ 'unterminated }}",
    "{% set 1 = 2 %}",
    "{{ a is }}",
    "{% macro m(a=1, b) %}{% endmacro %}",
    "{{ x is defined is defined }}",
]


def main():
    poot = os.environ.get("POOT")
    try:
        env = make_env()
    except ImportError:
        print("SKIP: the jinja2 Python package is not installed")
        return 77
    if not poot or not os.path.exists(poot):
        print("SKIP: the poot binary was not given (POOT)")
        return 77
    only = sys.argv[1:]
    failures = 0
    with tempfile.TemporaryDirectory() as tmp:
        vpath = os.path.join(tmp, "vars.json")
        variables = dict(V, bos_token=BOS, eos_token=EOS)
        with open(vpath, "w", encoding="utf-8") as f:
            json.dump(V, f, ensure_ascii=False)
        for idx, src in enumerate(CASES):
            if only and str(idx) not in only:
                continue
            tpath = os.path.join(tmp, f"case{idx}.jinja")
            with open(tpath, "wb") as f:
                f.write(src.encode("utf-8"))
            ok, ref = jinja_render(env, src, variables)
            cmd = [poot, "template", "--template", tpath, "--messages", vpath, "--bos", BOS,
                   "--eos", EOS, "--now", str(NOW)]
            p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=60)
            err = p.stderr.decode("utf-8", "replace").strip()
            if not ok:
                if p.returncode == 0:
                    failures += 1
                    print(f"FAIL case {idx}: jinja2 raised ({ref}) but poot rendered "
                          f"{p.stdout!r}\n    {src!r}")
                elif "-v" in os.environ.get("TEMPLATE_REF_FLAGS", ""):
                    print(f"ok   case {idx}: both fail: jinja2 {ref} | poot {err}")
                continue
            if p.returncode != 0:
                failures += 1
                print(f"FAIL case {idx}: poot failed: {err}\n    {src!r}\n    jinja2: {ref!r}")
                continue
            if p.stdout != ref.encode("utf-8"):
                failures += 1
                print(f"FAIL case {idx}: {src!r}\n    jinja2: {ref!r}\n    poot:   "
                      f"{p.stdout.decode('utf-8', 'replace')!r}")
    total = len(CASES) if not only else len(only)
    print(f"semantics cases matching jinja2: {total - failures}/{total}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
