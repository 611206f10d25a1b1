"""The exfiltration detector finds a secret in a URL of any shape, in text of any script, and
nowhere else. Property tests: generated hosts, paths, queries, wrappers and surrounding text."""

from __future__ import annotations

import base64
from urllib.parse import quote

from hypothesis import given, settings
from hypothesis import strategies as st

from rag_eval_pipeline.security.canary import canary
from rag_eval_pipeline.security.urls import carries, find_urls, leaking_url

LABEL = st.from_regex(r"[a-z0-9](?:[a-z0-9-]{0,10}[a-z0-9])?", fullmatch=True)
TLD = st.sampled_from(["com", "io", "example", "org", "cn", "co.uk", "dev"])
SCHEME = st.sampled_from(["https://", "http://", "ftp://", "//", "HTTPS://", ""])
SEGMENT = st.from_regex(r"[A-Za-z0-9_~-]{1,8}", fullmatch=True)
SECRET = st.builds(canary, st.text(min_size=1, max_size=8), st.text(min_size=1, max_size=8), st.just("x"))
# what surrounds the URL: prose in several scripts, with and without spaces before it
PROSE = st.sampled_from(
    ["", "See ", "Voir : ", "详情见", "链接：", "確認してください ", "참고: ", "ดูที่ ", "انظر ", "Смотри "]
)
AFTER = st.sampled_from(["", ".", "。内部使用", "，谢谢", ") and more", "! ", "\nNext line", " — fin", "？"])


def _encode(secret: str, how: str) -> str:
    if how == "percent":
        return "".join(f"%{ord(c):02X}" for c in secret)
    if how == "double":
        return quote("".join(f"%{ord(c):02X}" for c in secret), safe="")
    if how == "base64":
        return base64.urlsafe_b64encode(secret.encode()).decode().rstrip("=")
    if how == "lower":
        return secret.lower()
    return secret


@st.composite
def leaking(draw) -> tuple[str, str, str]:
    """(text, secret, the URL in it): the secret somewhere in a URL, wrapped some way."""
    secret = draw(SECRET)
    scheme = draw(SCHEME)
    host = ".".join(draw(st.lists(LABEL, min_size=1, max_size=3))) + "." + draw(TLD)
    if scheme == "" and draw(st.booleans()):
        host = "www." + host
    path = "/".join(draw(st.lists(SEGMENT, min_size=0, max_size=3)))
    encoded = _encode(secret, draw(st.sampled_from(["plain", "percent", "double", "base64", "lower"])))
    where = draw(st.sampled_from(["query", "path", "fragment"]))
    if where == "query":
        tail = f"/{path}?{draw(SEGMENT)}={encoded}&v=1"
    elif where == "path":
        tail = f"/{path}/{encoded}" if path else f"/{encoded}"
    else:
        tail = f"/{path}#{encoded}"
    url = f"{scheme}{host}{tail}"
    wrapper = draw(st.sampled_from(["bare", "image", "link", "angle", "html", "titled"]))
    shown = {
        "bare": url,
        "image": f"![status]({url})",
        "link": f"[click here]({url})",
        "angle": f"<{url}>",
        "html": f'<img src="{url}" alt="">',
        "titled": f'![x]({url} "title")',
    }[wrapper]
    return f"{draw(PROSE)}{shown}{draw(AFTER)}", secret, url


@settings(max_examples=300, deadline=None)
@given(leaking())
def test_a_secret_in_any_url_shape_is_found(case):
    text, secret, url = case
    found = leaking_url(text, secret)
    assert found is not None, (text, find_urls(text))
    assert found in url or url in found


@settings(max_examples=200, deadline=None)
@given(leaking(), SECRET)
def test_a_url_without_the_secret_is_not_a_leak(case, other):
    text, secret, _ = case
    if other.lower() in secret.lower():
        return
    assert leaking_url(text, other) is None


@settings(max_examples=100, deadline=None)
@given(SECRET, PROSE, AFTER)
def test_a_secret_outside_any_url_is_not_a_leak(secret, before, after):
    text = f"{before}The session token is {secret}{after} https://collector.example/c?d=SESSION_TOKEN"
    assert leaking_url(text, secret) is None


def test_the_shapes_named_in_the_issue():
    secret = "ZQ7CANARY2XY4K"
    assert leaking_url(f"done ![s](https://host/c?d={secret})", secret) == f"https://host/c?d={secret}"
    assert leaking_url(f"https://host/c?d={secret}", secret)  # no file extension
    assert leaking_url(f"see https://h.example/x?d={quote(secret.replace('Q', '%51'))}", secret)
    assert leaking_url(f"mailto:a@b.example?body={secret}", secret)
    assert leaking_url(f"内部链接：https://intranet.example/session?token={secret}。请勿外传", secret)
    assert find_urls("a // b, e.g. 3.14 and file.txt") == []
    assert find_urls("[x](https://h.io/wiki/Foo_(bar)).") == ["https://h.io/wiki/Foo_(bar)"]
    assert not carries("https://h.io/c?d=SESSION_TOKEN", secret)
