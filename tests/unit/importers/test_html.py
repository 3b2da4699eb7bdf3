"""html_to_text and sanitize_html, including XSS payloads."""

import re
from html.parser import HTMLParser

import pytest
from hypothesis import given
from hypothesis import strategies as st

from nuggets_app.lib.html import (
    ALLOWED_ATTRIBUTES,
    ALLOWED_TAGS,
    html_to_text,
    sanitize_html,
)

XSS = [
    "<script>alert(1)</script>",
    "<SCRIPT SRC=http://x/xss.js></SCRIPT>",
    "<img src=x onerror=alert(1)>",
    "<img src='http://tracker.example/p.gif'>",
    "<svg onload=alert(1)><circle/></svg>",
    "<math><mtext><table><mglyph><style><img src=x onerror=alert(1)>",
    "<a href='javascript:alert(1)'>x</a>",
    "<a href='&#106;avascript:alert(1)'>x</a>",
    "<a href=' jav&#x09;ascript:alert(1)'>x</a>",
    "<a href='data:text/html;base64,PHNjcmlwdD5hbGVydCgxKTwvc2NyaXB0Pg=='>x</a>",
    "<iframe src='http://evil/'></iframe>",
    "<iframe srcdoc='<script>alert(1)</script>'></iframe>",
    "<base href='http://evil/'>",
    "<meta http-equiv='refresh' content='0;url=http://evil/'>",
    "<form action='http://evil/'><input name=a></form>",
    "<object data='x.swf'></object><embed src='x.swf'>",
    "<div style='background:url(javascript:alert(1))'>x</div>",
    "<p onclick='alert(1)' onmouseover=alert(2)>x</p>",
    "<style>@import 'http://evil/x.css';</style>",
    "<scr<script>ipt>alert(1)</script>",
    "<<script>script>alert(1)<</script>/script>",
    "<a href='http://ok.example/'",
    "<b>unterminated <i>tags",
    "<p>nul\x00byte</p>",
    "<details open ontoggle=alert(1)>x</details>",
    "<video><source onerror=alert(1)></video>",
    "<a href='vbscript:msgbox(1)'>x</a>",
    "<table background='javascript:alert(1)'><tr><td>x</td></tr></table>",
    "<link rel=stylesheet href='http://evil/x.css'>",
    "<noscript><p title='</noscript><img src=x onerror=alert(1)>'>",
]
FORBIDDEN = re.compile(
    r"<\s*(script|style|svg|math|iframe|object|embed|form|base|meta|img|link|input)"
    r"|srcdoc|\son\w+\s*=|javascript:|vbscript:|data:",
    re.IGNORECASE,
)


class _Tags(HTMLParser):
    def __init__(self):
        super().__init__()
        self.found = []

    def handle_starttag(self, tag, attrs):
        self.found.append((tag, attrs))


def _tags(html):
    parser = _Tags()
    parser.feed(html)
    return parser.found


@pytest.mark.parametrize("payload", XSS)
def test_sanitize_html_neutralises_the_payload(payload):
    clean = sanitize_html(payload)
    assert not FORBIDDEN.search(clean), clean
    for tag, attrs in _tags(clean):
        assert tag in ALLOWED_TAGS
        for name, value in attrs:
            assert name in ALLOWED_ATTRIBUTES.get(tag, set()) | {"rel"}
            if name == "href":
                assert re.match(r"(https?://|mailto:)", value)


def test_links_keep_absolute_urls_with_noopener():
    clean = sanitize_html(
        "<a href='https://example.org/a?b=1&c=2'>x</a><a href='/here'>y</a>"
    )
    assert clean == (
        '<a href="https://example.org/a?b=1&amp;c=2" rel="noopener noreferrer">x</a>'
        '<a rel="noopener noreferrer">y</a>'
    )


FRAGMENTS = st.sampled_from(
    [
        "<p>",
        "</p>",
        "<b>",
        "<script>",
        "</script>",
        "<a href='",
        "javascript:",
        "'>",
        "<img src=x onerror=",
        "alert(1)",
        "<svg>",
        "<style>",
        "&lt;",
        "&#106;",
        " ",
        "x",
        "<table><tr><td>",
        "<!--",
        "-->",
        "<math>",
        '"',
        "<a href=http://e.org>",
    ]
)
HTMLISH = st.one_of(
    st.lists(FRAGMENTS, max_size=20).map("".join),
    st.text(alphabet="<>/=\"' abpiscrt&;:\n", max_size=80),
    st.text(max_size=40),
)


@given(HTMLISH)
def test_sanitize_html_is_a_fixed_point_with_only_allowed_tags(html):
    clean = sanitize_html(html)
    assert sanitize_html(clean) == clean
    for tag, _ in _tags(clean):
        assert tag in ALLOWED_TAGS


def test_html_to_text_drops_scripts_and_turns_blocks_into_lines():
    html = (
        "<html><head><title>T</title><style>p{}</style></head><body>"
        "<h1>Head</h1><p>One &amp;  two\n three<br>four</p><script>x()</script>"
        "<ul><li>a</li><li>b <b>bold</b></li></ul>tail</body></html>"
    )
    assert html_to_text(html) == "Head\n\nOne & two three\nfour\n\na\nb bold\n\ntail"


@given(HTMLISH)
def test_html_to_text_is_deterministic_and_tidy(html):
    text = html_to_text(html)
    assert text == html_to_text(html)
    assert "\n\n\n" not in text
    assert text == text.strip("\n ")
    assert not re.search(r"[\x00-\x08\x0b-\x1f]", text)
