"""Exact text length the way each network counts it.

Four units, one per family of networks:

- ``weighted``: X (twitter-text v3). NFC-normalized code points weigh 1 in four ranges (Latin to
  Georgian, some spaces, quotes and dashes) and 2 elsewhere (CJK, most symbols); every emoji
  sequence (ZWJ family, skin tone, flag, keycap) weighs 2 whatever its code points; every URL
  weighs 23. The total is compared with 280.
- ``graphemes``: extended grapheme clusters (UAX #29), what Bluesky, Threads, LinkedIn,
  Instagram, Facebook, Pinterest and Mastodon call characters. With a ``url_length`` the text is
  first rewritten the way Mastodon's ``StatusLengthValidator`` does: each URL becomes
  ``url_length`` characters and each remote mention ``@user@domain`` becomes ``@user``.
- ``utf16``: UTF-16 code units (JavaScript ``String.length``), TikTok's "UTF-16 runes".
- ``bytes``: UTF-8 bytes, YouTube's description limit.

URL detection follows twitter-text's rules (learned from its conformance suite, not its code):

- detected: ``http://`` and ``https://`` URLs (scheme case-insensitive) whose host is a domain
  ending in a known TLD (``TLDS`` below: legacy gTLDs, every ccTLD, common new gTLDs, a few IDN
  TLDs, and any ``xn--`` punycode TLD), an IPv4 address or a bracketed IPv6 literal; Unicode host
  labels (``http://☃.net``); optional userinfo and port; path, query and fragment with twitter-
  text's character classes, so trailing punctuation (``.`` ``,`` ``!`` ``'``...) is left out and
  balanced parentheses are kept; ``t.co`` links end after their slug.
- detected for X only: bare domains with a known TLD (``example.com/path``, ``foo.co.jp``), made
  of ASCII letters, digits and Latin accented letters, not preceded by ``-`` ``_`` ``.`` ``/``.
- not detected: a URL preceded by a letter, digit, ``@``, ``$`` or ``#`` (``#test.com``,
  ``user@example.com``); a TLD followed by a letter, digit or ``@`` (``foo.comm``, ``tar.bz2``);
  hosts with a label longer than 63 characters once punycode-encoded, or URLs longer than 4096;
  other schemes (``ftp://``); TLDs missing from the list: such a URL is counted character by
  character, more than 23 when it is long, fewer when it is shorter than 23.

Mastodon detects only URLs with a scheme (its validator disables bare domains), with its own
broader path rule (any non-space character, ``?``, ``<``, ``>`` and parentheses excepted) and a few
more schemes (``dat``, ``dweb``, ``ipfs``, ``ipns``, ``ssb``, ``gopher``, ``gemini``), as in its
``config/initializers/twitter_regex.rb``.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Iterator
from typing import Literal

import regex

TextUnit = Literal["weighted", "graphemes", "utf16", "bytes"]

# twitter-text config/v3.json: scale 100, defaultWeight 200, transformedURLLength 23,
# maxWeightedTweetLength 280, emojiParsingEnabled true, and the four ranges of weight 100.
WEIGHT_SCALE = 100
DEFAULT_WEIGHT = 200
LIGHT_WEIGHT = 100
LIGHT_RANGES: tuple[tuple[int, int], ...] = ((0, 4351), (8192, 8205), (8208, 8223), (8242, 8247))
TRANSFORMED_URL_LENGTH = 23
# twitter-text Extractor: a URL longer than this (host punycode-encoded) is not a link.
MAX_URL_LENGTH = 4096
MAX_LABEL_LENGTH = 63
MAX_TCO_SLUG_LENGTH = 40

# Top-level domains a URL may end in. twitter-text ships the whole IANA list; this one keeps the
# legacy gTLDs, every ISO 3166 ccTLD, the new gTLDs people actually link to and a few IDN TLDs.
_GENERIC_TLDS = """
    com net org edu gov mil int info biz name pro aero asia cat coop jobs mobi museum post tel
    travel xxx academy actor africa agency amazon app apple art audio bar bet bike bio black
    blog blue book box build business buzz cafe cam camera capital care careers casa center
    chat city click cloud club codes coffee community company computer consulting cool dance
    data dating deals delivery dental design dev digital direct directory domains download
    earth eco education email energy engineer estate events exchange expert express fashion
    film finance fit fitness foundation free fun fund game games garden gift global gmbh golf
    google graphics green group guide guru health help host house how icu inc ink institute
    insure international investments jetzt kitchen land lat law lawyer lease legal lgbt life
    lighting limited link live llc llp lol london love ltd market marketing mba media men menu
    moda moe money movie music network news ninja nyc observer one online ooo page paris
    partners party photo photography photos pics pictures pink pizza place plus press
    productions promo properties pub radio red reise rent repair report rest restaurant review
    reviews rocks run sale salon school science security services sexy shoes shop show singles
    site ski soccer social software solar solutions space store studio style supply support
    surf systems tax taxi team tech technology tips today tools top tours town toys trade
    training tube university uno vegas ventures video villas vip vision vote voyage wang watch
    web website wiki win wine work works world wtf xyz yoga zone
"""
_COUNTRY_TLDS = """
    ac ad ae af ag ai al am ao aq ar as at au aw ax az ba bb bd be bf bg bh bi bj bm bn bo bq br
    bs bt bv bw by bz ca cc cd cf cg ch ci ck cl cm cn co cr cu cv cw cx cy cz de dj dk dm do dz
    ec ee eg er es et eu fi fj fk fm fo fr ga gb gd ge gf gg gh gi gl gm gn gp gq gr gs gt gu gw
    gy hk hm hn hr ht hu id ie il im in io iq ir is it je jm jo jp ke kg kh ki km kn kp kr kw ky
    kz la lb lc li lk lr ls lt lu lv ly ma mc md me mg mh mk ml mm mn mo mp mq mr ms mt mu mv mw
    mx my mz na nc ne nf ng ni nl no np nr nu nz om pa pe pf pg ph pk pl pm pn pr ps pt pw py qa
    re ro rs ru rw sa sb sc sd se sg sh si sj sk sl sm sn so sr ss st su sv sx sy sz tc td tf tg
    th tj tk tl tm tn to tr tt tv tw tz ua ug uk us uy uz va vc ve vg vi vn vu wf ws ye yt za zm
    zw
"""
_IDN_TLDS = """
    みんな 中国 中國 香港 台灣 台湾 新加坡 한국 рф бел укр срб қаз мкд мон ελ
    مصر السعودية امارات ایران پاکستان قطر الاردن المغرب تونس عمان भारत ไทย 公司 网络 在线 网址
"""  # noqa: RUF001 (Cyrillic and Greek TLDs)
TLDS: frozenset[str] = frozenset((_GENERIC_TLDS + _COUNTRY_TLDS + _IDN_TLDS).split())

# A TLD from the list (a regex named list, matched as a set) or punycode, not followed by a letter,
# digit or "@" ("foo.comm", "tar.bz2" and "john.doe.gov@mail.com" hold no link).
_TLD = r"(?:\L<tlds>|xn--[0-9a-z-]+)(?![a-z0-9@])"

# Characters that end a host label: ASCII punctuation and symbols, Unicode punctuation,
# separators, controls and format characters (directional marks, BOM), noncharacters.
_HOST_CHAR = r"[^\p{P}\p{Z}\p{C}\s!-/:-@\[-`{-~]"
_LATIN_ACCENTS = (
    "\u00c0-\u00d6\u00d8-\u00f6\u00f8-\u00ff\u0100-\u024f\u0253\u0254\u0256\u0257\u0259\u025b"
    "\u0263\u0268\u026f\u0272\u0289\u028b\u02bb\u0300-\u036f\u1e00-\u1eff"
)
_CYRILLIC = "\u0400-\u04ff"
# A bare domain (no scheme) is made of ASCII letters, digits and Latin accented letters only.
_BARE_CHAR = f"[a-z0-9{_LATIN_ACCENTS}]"


def _domain(char: str) -> str:
    # Subdomains may hold "_" and "-" inside a label, the registered name only "-". The counts
    # are DNS's own bounds (63-character labels, 127 labels) and keep backtracking linear; the
    # exact label length is checked after punycode encoding.
    sub = rf"{char}(?:[-_]{{0,62}}{char}){{0,62}}"
    name = rf"{char}(?:-{{0,62}}{char}){{0,62}}"
    return rf"(?:{sub}\.){{0,126}}{name}\.{_TLD}"


_OCTET = r"(?:25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-9]?[0-9])"
_IPV4 = rf"{_OCTET}(?:\.{_OCTET}){{3}}(?![0-9])"
# IPv6 literals are recognised by shape, not validated group by group.
_IPV6 = r"\[[0-9a-f:.]+\]"
_HOST = rf"(?P<host>{_domain(_HOST_CHAR)}|{_IPV4}|{_IPV6})"
_USERINFO = r"(?:[-a-z0-9._~!$&'()*+,;=:%]+@)?"
_PORT = r"(?::[0-9]+)?"

# twitter-text path and query: a path piece must end in a letter, digit, "=", "_", "-", "+",
# "/", "#" or a balanced parenthesis, so sentence punctuation after a link is not part of it.
_X_PATH_CHAR = rf"[a-z0-9!*';:=+,.$/%#\[\]\-\u2013_~&|@{_LATIN_ACCENTS}{_CYRILLIC}]"
_X_PARENS = rf"\((?:{_X_PATH_CHAR}+|{_X_PATH_CHAR}*\({_X_PATH_CHAR}+\){_X_PATH_CHAR}*)\)"
_X_PATH_END = rf"(?:[a-z0-9=_#/\-+{_LATIN_ACCENTS}{_CYRILLIC}]|{_X_PARENS})"
_X_PATH = (
    rf"(?:/(?:{_X_PATH_CHAR}*(?:{_X_PARENS}{_X_PATH_CHAR}*)*{_X_PATH_END}"
    rf"|@{_X_PATH_CHAR}+/)*)?"
)
_X_QUERY = r"(?:\?[a-z0-9!?*'();:&=+$/%#\[\]\-_.,~|@]*[a-z0-9\-_&=#/])?"

# Mastodon's path and query (config/initializers/twitter_regex.rb): any non-space character but
# "<", ">", "(", ")" and "?", ending in one that is not sentence punctuation.
_UCHARS = "\u00a0-\ud7ff\ue000-\uf8ff\uf900-\ufdcf\ufdf0-\uffef\U00010000-\U0010fffd"
_M_PATH_CHAR = r"[^\s<>()?]"
_M_PARENS = rf"\((?:{_M_PATH_CHAR}+|{_M_PATH_CHAR}*\({_M_PATH_CHAR}+\){_M_PATH_CHAR}*)\)"
_M_PATH_END = rf"(?:[^\s()?!*\"'「」<>;:=,.$%\[\]~&|@]|{_M_PARENS})"
_M_PATH = (
    rf"(?:/(?:{_M_PATH_CHAR}*(?:{_M_PARENS}{_M_PATH_CHAR}*)*{_M_PATH_END}"
    rf"|{_M_PATH_CHAR}+/)*)?"
)
_M_QUERY = rf"(?:\?[a-z0-9!?*'();:&=+$/%#\[\]\-_.,~|@^{_UCHARS}]*[a-z0-9_&=#/\-{_UCHARS}])?"

# A link may not follow a letter, digit, "@", "$", "#" (mentions, cashtags, hashtags, emails) or an
# invalid character; directional marks are fine (twitter-text's valid_url_preceding_chars).
_PRECEDING = "(?<![a-z0-9@\uff20$#\uff03\ufffe\ufeff\uffff])"
# A bare domain may not continue a word, a path or a failed URL either.
_BARE_PRECEDING = r"(?<![-_./])"

_FLAGS = regex.IGNORECASE | regex.V1
_X_URL = regex.compile(
    rf"{_PRECEDING}(?:(?P<url>https?://{_USERINFO}{_HOST}{_PORT}{_X_PATH}{_X_QUERY})"
    rf"|{_BARE_PRECEDING}(?P<bare>(?P<bare_host>{_domain(_BARE_CHAR)}){_PORT}{_X_PATH}{_X_QUERY}))",
    _FLAGS,
    tlds=TLDS,
)
_MASTODON_URL = regex.compile(
    rf"{_PRECEDING}(?P<url>(?:https?|dat|dweb|ipfs|ipns|ssb|gopher|gemini)://"
    rf"{_USERINFO}{_HOST}{_PORT}{_M_PATH}{_M_QUERY})",
    _FLAGS,
    tlds=TLDS,
)
_TCO = regex.compile(
    r"https?://t\.co/(?P<slug>[a-z0-9]+)(?:\?[a-z0-9!?*'();:&=+$/%#\[\]\-_.,~|@]*[a-z0-9\-_&=#/])?",
    regex.IGNORECASE,
)

# Mastodon's Account::MENTION_RE: @username, optionally @domain.
_MENTION = regex.compile(
    r"(?<![=/\w])@(?P<user>[a-z0-9_]+(?:[a-z0-9_.-]+[a-z0-9_]+)?)(?:@[\w.-]+\w+)?",
    regex.IGNORECASE,
)
# twitter-text's end_mention_match: a mention followed by these is not a mention.
_MENTION_END = regex.compile(rf"[@\uff20{_LATIN_ACCENTS}]|://")

# One emoji sequence (UTS #51): keycap, flag, tag sequence (England), modifier sequence,
# presentation sequence or pictograph, joined by ZWJ. "#", "*", digits, "©" and "®" are text
# unless followed by U+FE0F or a keycap.
_EMOJI_ELEMENT = (
    r"(?:[#*0-9]\uFE0F?\u20E3"
    r"|\p{Regional_Indicator}{2}"
    r"|\U0001F3F4[\U000E0020-\U000E007E]+\U000E007F"
    r"|\p{Emoji_Modifier_Base}\p{Emoji_Modifier}"
    r"|[\p{Emoji}--[#*0-9]]\uFE0F"
    r"|[[\p{Emoji_Presentation}\p{Extended_Pictographic}]--[#*0-9\u00a9\u00ae]])\uFE0F?"
)
_EMOJI = regex.compile(rf"{_EMOJI_ELEMENT}(?:\u200D{_EMOJI_ELEMENT})*", regex.V1)
_GRAPHEME = regex.compile(r"\X")

# Pathological input must not stall a request: give up on URL detection after this long and count
# the text character by character (over-counting, the safe direction).
_URL_SCAN_TIMEOUT_SECONDS = 0.5


def count_text(text: str, unit: TextUnit, url_length: int | None = None) -> int:
    """The length of ``text`` in ``unit``; ``url_length`` applies to weighted and grapheme units."""
    if unit == "weighted":
        return count_weighted(
            text, url_length=TRANSFORMED_URL_LENGTH if url_length is None else url_length
        )
    if unit == "graphemes":
        return count_graphemes(text, url_length)
    if unit == "utf16":
        return count_utf16(text)
    if unit == "bytes":
        return count_utf8_bytes(text)
    raise ValueError(f"unknown text unit {unit!r}")


def count_weighted(text: str, *, url_length: int = TRANSFORMED_URL_LENGTH) -> int:
    """X's weighted length (twitter-text v3), to compare with 280."""
    # The X API stores CRLF as LF (twitter-text issue #8), so a line break counts once.
    normalized = unicodedata.normalize("NFC", text.replace("\r\n", "\n"))
    total = 0
    cursor = 0
    for start, end in x_url_spans(normalized):
        total += _weigh_text(normalized[cursor:start]) + url_length * WEIGHT_SCALE
        cursor = end
    total += _weigh_text(normalized[cursor:])
    return total // WEIGHT_SCALE


def count_graphemes(text: str, url_length: int | None = None) -> int:
    """Extended grapheme clusters; with ``url_length``, Mastodon's URL and mention rewriting.

    Mastodon (app/validators/status_length_validator.rb) replaces every URL it would link with
    ``url_length`` placeholder characters and every mention ``@user@domain`` with ``@user``
    before counting grapheme clusters, so neither the URL nor the remote domain costs anything.
    """
    if url_length is not None:
        text = _mastodon_countable_text(text, url_length)
    return sum(1 for _ in _GRAPHEME.finditer(text))


def count_utf16(text: str) -> int:
    """UTF-16 code units: characters outside the BMP (most emoji) count 2."""
    return len(text.encode("utf-16-le", "surrogatepass")) // 2


def count_utf8_bytes(text: str) -> int:
    """UTF-8 bytes: ASCII 1, most accented letters 2, CJK 3, emoji 4 per code point."""
    return len(text.encode("utf-8", "surrogatepass"))


def x_url_spans(text: str) -> list[tuple[int, int]]:
    """Start and end of every link X would shorten to t.co, in order (text already NFC)."""
    spans = []
    for match in _scan(_X_URL, text):
        if match.group("url") is not None:
            span = _checked_url_span(match, text)
        else:
            span = _checked_span(match.start("bare"), match.end("bare"), match, "bare_host")
        if span is not None:
            spans.append(span)
    return spans


def mastodon_url_spans(text: str) -> list[tuple[int, int]]:
    """Start and end of every link Mastodon would count as ``characters_reserved_per_url``."""
    spans = []
    for match in _scan(_MASTODON_URL, text):
        span = _checked_url_span(match, text)
        if span is not None:
            spans.append(span)
    return spans


def _scan(pattern: regex.Pattern[str], text: str) -> Iterator[regex.Match[str]]:
    try:
        yield from pattern.finditer(text, timeout=_URL_SCAN_TIMEOUT_SECONDS)
    except TimeoutError:
        return


def _checked_url_span(match: regex.Match[str], text: str) -> tuple[int, int] | None:
    start, end = match.start("url"), match.end("url")
    tco = _TCO.match(text, start, end)
    if tco is not None and match.group("host").lower() == "t.co":
        # A t.co link ends after its slug: "http://t.co/abc's" links "http://t.co/abc".
        if len(tco.group("slug")) > MAX_TCO_SLUG_LENGTH:
            return None
        end = tco.end()
    return _checked_span(start, end, match, "host")


def _checked_span(
    start: int, end: int, match: regex.Match[str], host_group: str
) -> tuple[int, int] | None:
    host = match.group(host_group)
    ascii_host = _ascii_host(host)
    if ascii_host is None:
        return None
    if (end - start) - len(host) + len(ascii_host) > MAX_URL_LENGTH:
        return None
    return start, end


def _ascii_host(host: str) -> str | None:
    """The host as DNS sees it (IDNA punycode), or None if a label cannot exist in DNS."""
    if host.startswith("["):
        return host
    labels = []
    for label in host.lower().split("."):
        if label.isascii():
            encoded = label
        elif label.startswith("xn--"):
            # An ACE prefix on a Unicode label is malformed ("http://xn--はじめよう.com").
            return None
        else:
            encoded = "xn--" + label.encode("punycode").decode("ascii")
        if not encoded or len(encoded) > MAX_LABEL_LENGTH:
            return None
        labels.append(encoded)
    return ".".join(labels)


def _weigh_text(text: str) -> int:
    """Scaled weight of text holding no URL: emoji sequences 200, other code points by range."""
    total = 0
    cursor = 0
    for match in _EMOJI.finditer(text):
        total += sum(_code_point_weight(ch) for ch in text[cursor : match.start()])
        total += DEFAULT_WEIGHT
        cursor = match.end()
    total += sum(_code_point_weight(ch) for ch in text[cursor:])
    return total


def _code_point_weight(ch: str) -> int:
    code_point = ord(ch)
    for low, high in LIGHT_RANGES:
        if low <= code_point <= high:
            return LIGHT_WEIGHT
    return DEFAULT_WEIGHT


def _mastodon_countable_text(text: str, url_length: int) -> str:
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
