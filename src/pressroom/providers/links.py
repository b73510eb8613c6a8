"""Links (and Mastodon's mentions) as each network finds them.

Links follow each network's own extractor, rule for rule (the differential tests in
``tests/differential`` hold X's against twitter-text itself):

- X (twitter-text 3.1.0 ``extractUrlsWithIndices``): a link is ``http(s)://`` or nothing, then a
  domain whose last label is a TLD twitter-text knows (``tlds.py``, generated from the npm
  package: 1,574 of them, no ``.web``) or punycode ``xn--``, then an optional port, path and
  query. There are no IP hosts and no ``user:pw@`` userinfo: ``http://192.168.0.1/`` and
  ``https://user:pw@example.com`` are counted character by character, as X does. Domain labels
  hold anything but ASCII punctuation, spaces and directional marks; a bare domain (no scheme)
  links only its ASCII and Latin-accented part and not after ``-`` ``_`` ``.`` ``/``. Paths end
  in a letter, digit, ``=`` ``_`` ``#`` ``/`` ``+`` ``-`` or balanced parentheses (one level of
  nesting), so sentence punctuation after a link stays out. A link may not follow a letter,
  digit, ``@``, ``$``, ``#`` or an invalid character; ``t.co`` links end after their slug (at
  most 40). A label longer than 63 once punycode-encoded, or a link longer than 4096 UTF-16 units
  counting its scheme (``https://`` for a bare one) twice, is no link.
- Mastodon (the Ruby gem of the same twitter-text version, with Mastodon's
  ``config/initializers/twitter_regex.rb`` and ``StatusLengthValidator``): only links with a
  scheme count (``http``, ``https``, ``dat``, ``dweb``, ``ipfs``, ``ipns``, ``ssb``, ``gopher``,
  ``gemini``), though a bare domain still takes its text out of the scan; the path is any
  non-space character but ``<`` ``>`` ``(`` ``)`` ``?``, ending in one that is not sentence
  punctuation; queries may hold any Unicode character. The Ruby punctuation class also keeps
  ``"`` and backquote out of domains, and the domain must pass IDNA 2003 (libidn's
  ``toASCII``, no unassigned code points): ``https://🐦.example.com`` is not a link there.

Matching case-insensitively the way JavaScript's ``/i`` does (ASCII letters, and non-ASCII
letters with non-ASCII partners only: the Kelvin sign is not a ``k``), every pattern runs on a
folded copy of the text (``_fold``), one character for one, so positions carry over.
"""

from __future__ import annotations

import encodings.idna
import functools
import stringprep
import time
from collections.abc import Iterable
from collections.abc import Iterator
from dataclasses import dataclass

import regex

from pressroom.providers.tlds import COUNTRY_TLDS
from pressroom.providers.tlds import GENERIC_TLDS

# twitter-text Extractor: a URL longer than this (host punycode-encoded) is not a link.
MAX_URL_LENGTH = 4096
MAX_LABEL_LENGTH = 63
MAX_TCO_SLUG_LENGTH = 40
TLDS: frozenset[str] = frozenset(GENERIC_TLDS + COUNTRY_TLDS)

# --- JavaScript's case-insensitive matching ------------------------------------------------------


def _canonical(char: str) -> str:
    """ECMAScript Canonicalize for /i without /u: the upper case, when it is one code unit and
    does not turn a non-ASCII character into an ASCII one."""
    upper = char.upper()
    if len(upper) != 1 or (ord(char) >= 128 and ord(upper) < 128) or ord(upper) > 0xFFFF:
        return char
    return upper


_FOLD: dict[int, str] = {
    code: _canonical(chr(code))
    for code in range(0x10000)
    if not 0xD800 <= code < 0xE000 and _canonical(chr(code)) != chr(code)
}


def _fold(text: str) -> str:
    return text.translate(_FOLD)


def _class(members: Iterable[str]) -> str:
    """A character class body matching, in folded text, what ``members`` match under /i."""
    folded = sorted({ord(_canonical(m)) for m in members})
    parts = []
    index = 0
    while index < len(folded):
        low = high = folded[index]
        while index + 1 < len(folded) and folded[index + 1] == high + 1:
            index += 1
            high = folded[index]
        parts.append(_escape(low) if low == high else f"{_escape(low)}-{_escape(high)}")
        index += 1
    return "".join(parts)


def _escape(code: int) -> str:
    return f"\\U{code:08x}"


def _chars(*spans: str | tuple[int, int]) -> list[str]:
    out: list[str] = []
    for span in spans:
        if isinstance(span, tuple):
            out.extend(chr(c) for c in range(span[0], span[1] + 1))
        else:
            out.extend(span)
    return out


_ASCII_LETTERS = _chars((0x61, 0x7A), (0x41, 0x5A))
_DIGITS = _chars((0x30, 0x39))
# twitter-text regexp/latinAccentChars.js and cyrillicLettersAndMarks.js.
_LATIN_ACCENTS = _chars(
    (0xC0, 0xD6),
    (0xD8, 0xF6),
    (0xF8, 0xFF),
    (0x100, 0x24F),
    "\u0253\u0254\u0256\u0257\u0259\u025b\u0263\u0268\u026f\u0272\u0289\u028b\u02bb",
    (0x300, 0x36F),
    (0x1E00, 0x1EFF),
)
_CYRILLIC = _chars((0x400, 0x4FF))
# regexp/spacesGroup.js, invalidCharsGroup.js, directionalMarkersGroup.js.
_SPACES = (
    "\\x09-\\x0d\\x20\\x85\\xa0\\u1680\\u180e\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000"
)
_INVALID = "\\ufffe\\ufeff\\uffff"
_DIRECTIONAL = "\\u202a-\\u202e\\u061c\\u200e\\u200f\\u2066-\\u2069"
# regexp/punct.js: ASCII punctuation but '"' and '`' (the Ruby gem's list has both).
_JS_PUNCT = "!'#%&()*+,\\-./:;<=>?@[]^_{|}~$"
_RUBY_PUNCT = "!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~"

# regexp/validUrlPrecedingChars.js: anything but a letter, digit, @, $, # or an invalid
# character; a directional mark; or the start of the text. The character is consumed.
_PRECEDING = (
    rf"(?P<before>[^{_class(_ASCII_LETTERS + _DIGITS)}@\uff20$#\uff03{_INVALID}]"
    rf"|[{_DIRECTIONAL}]|^)"
)
_TLD_END = rf"(?=[^{_class(_ASCII_LETTERS + _DIGITS)}@+\-]|\Z)"
_TLD = rf"(?:\L<generic>{_TLD_END}|\L<country>{_TLD_END}|XN--[\-0-9A-Z]+)"
_GENERIC = [_fold(tld) for tld in GENERIC_TLDS]
_COUNTRY = [_fold(tld) for tld in COUNTRY_TLDS]


def _label_runs(punct: str) -> regex.Pattern[str]:
    """Runs of characters a subdomain label may hold (its widest kind)."""
    stop = "".join(_escape(ord(c)) for c in sorted(set(punct) - {"_", "-"}))
    return regex.compile(f"[^{stop}{_SPACES}{_INVALID}{_DIRECTIONAL}]+")


def _domain(punct: str) -> str:
    # regexp/validDomain.js: subdomains (labels with "_" or "-" inside), the name (labels with
    # "-" inside), the TLD. A label runs to the next "." whatever the regex tries, so it is
    # matched atomically: the same matches, without the backtracking.
    def outside(chars: str) -> str:
        escaped = "".join(_escape(ord(c)) for c in sorted(set(chars)))
        return f"[^{escaped}{_SPACES}{_INVALID}{_DIRECTIONAL}]"

    char = outside(punct)
    sub = rf"(?>{char}{outside(punct.replace('_', '').replace('-', ''))}*)(?<={char})\."
    name = rf"(?>{char}{outside(punct.replace('-', ''))}*)(?<={char})\."
    return rf"(?:{sub})*{name}{_TLD}"


@dataclass(frozen=True)
class _UrlSyntax:
    """How one network finds links: the link pattern, and where one can start (see `_scan`)."""

    url: regex.Pattern[str]
    label_runs: regex.Pattern[str]
    protocol: regex.Pattern[str]

    @classmethod
    def build(cls, protocol: str, punct: str, path: str, query: str) -> _UrlSyntax:
        """A link: an optional scheme (`protocol`), a domain whose labels hold anything but
        `punct`, then an optional port, path (`path` characters) and query."""
        url = regex.compile(
            rf"{_PRECEDING}(?P<url>(?P<protocol>{protocol})?(?P<domain>{_domain(punct)})"
            rf"(?::[0-9]+)?(?P<path>/{path}*)?(?:{query})?)",
            regex.VERSION0,
            generic=_GENERIC,
            country=_COUNTRY,
        )
        return cls(url, _label_runs(punct), regex.compile(protocol))


_X_PATH_CHAR = f"[{_class(_ASCII_LETTERS + _CYRILLIC + _DIGITS + _LATIN_ACCENTS)}" + (
    r"!*';:=+,.$/%#\[\]\-\u2013_~@|&]"
)
_X_PARENS = rf"\((?:{_X_PATH_CHAR}+|(?:{_X_PATH_CHAR}*\({_X_PATH_CHAR}+\){_X_PATH_CHAR}*))\)"
_X_PATH_END = (
    rf"(?:[+\-{_class(_ASCII_LETTERS + _CYRILLIC + _DIGITS + _LATIN_ACCENTS)}=_#/]|{_X_PARENS})"
)
_X_PATH = (
    rf"(?:(?:{_X_PATH_CHAR}*(?:{_X_PARENS}{_X_PATH_CHAR}*)*{_X_PATH_END})|(?:@{_X_PATH_CHAR}+/))"
)
_X_QUERY_CHAR = rf"[{_class(_ASCII_LETTERS + _DIGITS)}!?*'@();:&=+$/%#\[\]\-_.,~|]"
_X_QUERY_END = rf"[{_class(_ASCII_LETTERS + _DIGITS)}\-_&=#/]"
_X_QUERY = rf"\?{_X_QUERY_CHAR}*{_X_QUERY_END}"

# The patterns holding the TLD lists are compiled on first use, not at import: together they take
# ~0.3 s, which every process (the CLI, a worker, a server) would otherwise pay at start.


@functools.cache
def _x_url() -> _UrlSyntax:
    return _UrlSyntax.build("HTTPS?://", _JS_PUNCT, _X_PATH, _X_QUERY)


@functools.cache
def _x_ascii_domain() -> regex.Pattern[str]:
    """regexp/validAsciiDomain.js: the part of a scheme-less domain that may be linked."""
    return regex.compile(
        rf"(?:[\-{_class(_ASCII_LETTERS + _DIGITS + _LATIN_ACCENTS)}]+\.)+{_TLD}",
        regex.VERSION0,
        generic=_GENERIC,
        country=_COUNTRY,
    )


_X_TCO = regex.compile(rf"HTTPS?://T\.CO/(?P<slug>[A-Z0-9]+)(?:{_X_QUERY})?", regex.VERSION0)
_DEFAULT_PROTOCOL = "https://"
# punycode.js toASCII: these separate labels too.
_LABEL_SEPARATORS = regex.compile("[.\u3002\uff0e\uff61]")

# Mastodon's config/initializers/twitter_regex.rb. Its path-ending rule was written before it
# redefines the balanced parentheses, so a path may end in the gem's original ones.
_M_OLD_PATH_CHAR = f"[{_class(_ASCII_LETTERS + _DIGITS + _LATIN_ACCENTS)}\\p{{Cyrillic}}" + (
    r"!*';:=+,.$/%#\[\]\-\u2013_~|&@]"
)
_M_OLD_PARENS = (
    rf"\((?:{_M_OLD_PATH_CHAR}+|(?:{_M_OLD_PATH_CHAR}*\({_M_OLD_PATH_CHAR}+\)"
    rf"{_M_OLD_PATH_CHAR}*))\)"
)
_M_PATH_CHAR = r"[^\p{White_Space}<>()?]"
_M_PATH_END = rf"(?:[^\p{{White_Space}}()?!*\"'「」<>;:=,.$%\[\]~&|@]|(?:{_M_OLD_PARENS}))"
_M_PARENS = rf"\((?:{_M_PATH_CHAR}+|(?:{_M_PATH_CHAR}*\({_M_PATH_CHAR}+\){_M_PATH_CHAR}*))\)"
_M_PATH = (
    rf"(?:(?:{_M_PATH_CHAR}*(?:{_M_PARENS}{_M_PATH_CHAR}*)*{_M_PATH_END})|(?:{_M_PATH_CHAR}+/))"
)
_UCHARS = (
    "\\xa0-\\ud7ff\\uf900-\\ufdcf\\ufdf0-\\uffef\\U00010000-\\U0001fffd\\U00020000-\\U0002fffd"
    "\\U00030000-\\U0003fffd\\U00040000-\\U0004fffd\\U00050000-\\U0005fffd\\U00060000-\\U0006fffd"
    "\\U00070000-\\U0007fffd\\U00080000-\\U0008fffd\\U00090000-\\U0009fffd\\U000a0000-\\U000afffd"
    "\\U000b0000-\\U000bfffd\\U000c0000-\\U000cfffd\\U000d0000-\\U000dfffd\\U000e1000-\\U000efffd"
    "\\ue000-\\uf8ff\\U000f0000-\\U000ffffd\\U00100000-\\U0010fffd"
)
_M_QUERY = (
    rf"\?[{_class(_ASCII_LETTERS + _DIGITS)}!?*'();:&=+$/%#\[\]\-_.,~|@\^{_UCHARS}]*"
    rf"[{_class(_ASCII_LETTERS + _DIGITS)}_&=#/\-{_UCHARS}]"
)


@functools.cache
def _mastodon_url() -> _UrlSyntax:
    return _UrlSyntax.build(
        "(?:HTTPS?|DAT|DWEB|IPFS|IPNS|SSB|GOPHER|GEMINI)://", _RUBY_PUNCT, _M_PATH, _M_QUERY
    )


# Mastodon's Account::MENTION_RE: @username, optionally @domain.
_MENTION = regex.compile(
    r"(?<![=/\w])@(?P<user>[a-z0-9_]+(?:[a-z0-9_.-]+[a-z0-9_]+)?)(?:@[\w.-]+\w+)?",
    regex.IGNORECASE,
)
# twitter-text's end_mention_match: a mention followed by these is not a mention.
_MENTION_END = regex.compile(f"[@\uff20{regex.escape(''.join(_LATIN_ACCENTS))}]|://")

# Pathological input must not stall a request: give up on URL detection after this much of the
# thread's CPU time and count the rest character by character (over-counting, the safe direction).
# CPU time, not the wall clock: a count must not change because the machine is busy (a text that
# takes 1 ms to scan used to lose its links when its thread waited 0.5 s for a core).
_URL_SCAN_CPU_SECONDS = 0.5
# Below this much CPU time left the scan stops rather than retry a match (see `_match_within`).
_URL_SCAN_LEAST_SECONDS = 0.001


# --- Links ---------------------------------------------------------------------------------------


def x_url_spans(text: str) -> list[tuple[int, int]]:
    """Start and end of every link X would shorten to t.co, in order (text already NFC)."""
    if "." not in text:
        return []
    folded = _fold(text)
    spans: list[tuple[int, int]] = []
    for match in _scan(_x_url(), folded):
        start, end = match.span("url")
        domain_start, domain_end = match.span("domain")
        url, domain = text[start:end], text[domain_start:domain_end]
        protocol = match.group("protocol")
        folded_domain = folded[domain_start:domain_end]
        if not _x_valid_url(url, protocol or _DEFAULT_PROTOCOL, domain, folded_domain):
            continue
        if protocol is None:
            if match.group("before")[-1:] in ("-", "_", ".", "/"):
                continue
            found = _x_ascii_domains(domain, folded_domain)
            if not found:
                continue
            found = [(start + s, start + e) for s, e in found]
            if match.group("path"):
                # Only the last of them takes the path (and the query) along.
                found[-1] = (found[-1][0], end)
            spans.extend(found)
            continue
        tco = _X_TCO.match(folded, start, end)
        if tco is not None:
            if len(tco.group("slug")) > MAX_TCO_SLUG_LENGTH:
                continue
            end = tco.end()
        spans.append((start, end))
    return spans


def _x_valid_url(url: str, protocol: str, domain: str, folded_domain: str) -> bool:
    # twitter-text lib/idna.js: a domain starting "xn--" must hold an ASCII domain; every label
    # fits DNS once punycode-encoded. Then the scheme and the whole link fit 4096 UTF-16 units.
    if domain.startswith("xn--") and _x_ascii_domain().search(folded_domain) is None:
        return False
    for label in domain.split("."):
        encoded = ".".join(_punycode_part(part) for part in _LABEL_SEPARATORS.split(label))
        if not 1 <= len(encoded) <= MAX_LABEL_LENGTH:
            return False
    return _utf16_length(protocol) + _utf16_length(url) <= MAX_URL_LENGTH


def _punycode_part(part: str) -> str:
    if all(" " <= c <= "~" for c in part):
        return part
    return "xn--" + part.encode("punycode", "surrogatepass").decode("ascii")


def _x_ascii_domains(domain: str, folded_domain: str) -> list[tuple[int, int]]:
    """The linkable pieces of a scheme-less domain, as twitter-text finds them."""
    pieces = []
    cursor = 0
    for match in _x_ascii_domain().finditer(folded_domain):
        start = domain.find(domain[match.start() : match.end()], cursor)
        cursor = start + (match.end() - match.start())
        pieces.append((start, cursor))
    return pieces


def mastodon_url_spans(text: str) -> list[tuple[int, int]]:
    """Start and end of every link Mastodon would count as ``characters_reserved_per_url``."""
    if ":" not in text:
        return []
    folded = _fold(text)
    spans = []
    for match in _scan(_mastodon_url(), folded):
        if match.group("protocol") is None:
            continue  # Mastodon extracts with extract_url_without_protocol: false
        start, end = match.span("url")
        tco = _X_TCO.match(folded, start, end)
        if tco is not None:
            if len(tco.group("slug")) > MAX_TCO_SLUG_LENGTH:
                continue
            end = tco.end()
        domain = text[match.start("domain") : match.end("domain")]
        encoded_length = _idna2003_length(domain)
        if encoded_length is None:
            continue
        if (end - start) + max(0, encoded_length - len(domain)) > MAX_URL_LENGTH:
            continue
        spans.append((start, end))
    return spans


def _idna2003_length(domain: str) -> int | None:
    """The length of ``domain`` after IDNA 2003 ToASCII (what libidn gives the Ruby gem), or
    None where libidn refuses it (an unassigned code point, a prohibited one, a label that is
    empty or over 63)."""
    labels = _LABEL_SEPARATORS.split(domain)
    try:
        encoded = []
        for label in labels:
            if any(stringprep.in_table_a1(c) for c in label):
                return None
            encoded.append(encodings.idna.ToASCII(label))
    except UnicodeError:
        return None
    return len(b".".join(encoded))


def _scan(syntax: _UrlSyntax, text: str) -> Iterator[regex.Match[str]]:
    """``syntax.url.finditer(text)``, trying only where a link can start.

    A domain begins with a label that runs to a "."; a link with a scheme begins with it. A
    match starts one character before either (the preceding character it consumes), or at 0.
    Skipping every other position gives the same matches without trying each character of a
    long run (emoji, CJK) against the domain pattern: linear where finditer is quadratic.
    """
    starts = {0}
    for run in syntax.label_runs.finditer(text):
        if text.startswith(".", run.end()):
            starts.update(range(max(run.start() - 1, 0), run.end()))
    starts.update(max(found.start() - 1, 0) for found in syntax.protocol.finditer(text))
    began = time.thread_time()
    position = 0
    for start in sorted(starts):
        if start < position:
            continue
        try:
            match = _match_within(syntax.url, text, start, began)
        except TimeoutError:
            return
        if match is not None:
            yield match
            position = match.end()


def _match_within(
    pattern: regex.Pattern[str], text: str, start: int, began: float
) -> regex.Match[str] | None:
    """``pattern.match(text, start)`` while the scan begun at ``began`` (this thread's CPU
    clock) is within its budget; TimeoutError once it is not.

    The regex module's timeout is wall-clock time. When it runs out while the thread still had
    CPU time left (it waited for a core), the match is tried again with what is left, so that
    only the thread's own work counts. Each try costs at most the CPU time it was given, so the
    whole scan costs at most its budget.
    """
    while True:
        remaining = _URL_SCAN_CPU_SECONDS - (time.thread_time() - began)
        if remaining < _URL_SCAN_LEAST_SECONDS:
            raise TimeoutError("the link scan used up its CPU time")
        try:
            return pattern.match(text, start, timeout=remaining)
        except TimeoutError:
            continue


def mastodon_countable_text(text: str, url_length: int) -> str:
    # Entities as Mastodon extracts them; where a URL and a mention overlap the earlier one wins
    # (twitter-text's remove_overlapping_entities).
    entities: list[tuple[int, int, str]] = [
        (start, end, "x" * url_length) for start, end in mastodon_url_spans(text)
    ]
    for match in _MENTION.finditer(text):
        if _MENTION_END.match(text, match.end()):
            continue
        entities.append((match.start(), match.end(), "@" + match.group("user")))
    entities.sort(key=lambda entity: entity[0])
    pieces = []
    cursor = 0
    for start, end, replacement in entities:
        if start < cursor:
            continue
        pieces.append(text[cursor:start])
        pieces.append(replacement)
        cursor = end
    pieces.append(text[cursor:])
    return "".join(pieces)


def _utf16_length(text: str) -> int:
    # JavaScript's String.length, which twitter-text's limit is written in.
    return len(text.encode("utf-16-le", "surrogatepass")) // 2
