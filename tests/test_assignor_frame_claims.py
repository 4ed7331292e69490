"""The frame's claim check at once over all members (reference/assignors/_frame.py, ``_claims_plain``, issue 32):
range and roundrobin never read ``owned`` but must reject a malformed one exactly as before. ``normalize`` with
``keep_owned=False`` must give the same members, or raise the same error (same message: which member, what), as the
member-by-member checks (``_normalize`` with claim columns) on any input; the test is shown to fail when the check
at once lets a malformed claim through."""
from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from groupspec.reference.assignors import _frame

_pair = st.one_of(
    st.tuples(st.sampled_from(["t", "u"]), st.integers(-1, 3)).map(list),
    st.tuples(st.sampled_from(["t", "u"]), st.integers(0, 3)),
    st.just(["t"]), st.just(["t", 1, 2]), st.just(("t", True)), st.just(["t", "1"]), st.just([1, "t"]),
    st.just({"t", 1}), st.just("t1"), st.just(7), st.just(None), st.just(["t", 2.0]),
)
_owned = st.one_of(st.none(), st.just(""), st.just(0), st.just("tt"), st.just({"t": 1}),
                   st.lists(_pair, max_size=4), st.lists(_pair, max_size=3).map(tuple),
                   st.lists(st.tuples(st.just("t"), st.integers(0, 3)).map(list), max_size=5))
_sub = st.one_of(
    st.fixed_dictionaries({}, optional={"topics": st.just(["t", "u"]), "owned": _owned,
                                        "generation": st.sampled_from([1, -1, None, "x"])}),
    st.just(None), st.just(5),
)


def outcome(fn: Any) -> Any:
    try:
        return ("ok", fn())
    except ValueError as e:
        return ("error", str(e))


@settings(max_examples=400, deadline=None)
@given(st.dictionaries(st.sampled_from(["a", "b", "c", "d"]), _sub, max_size=4))
def test_the_claims_checked_at_once_give_the_member_by_member_answer(subs: dict[str, Any]) -> None:
    at_once = outcome(lambda: _frame.normalize(subs, keep_owned=False))
    one_by_one = outcome(lambda: _frame._normalize(subs, _frame.ClaimColumns([], [])))
    assert at_once == one_by_one


def test_a_check_that_lets_a_bad_claim_through_is_caught(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_frame, "_claims_plain", lambda subscriptions: True)
    bad = {"a": {"topics": ["t"], "owned": [["t", "1"]]}}
    assert outcome(lambda: _frame.normalize(bad, keep_owned=False))[0] == "ok"
    assert outcome(lambda: _frame._normalize(bad, _frame.ClaimColumns([], [])))[0] == "error"
