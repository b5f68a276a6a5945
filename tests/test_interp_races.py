"""The sanitizer's race detector (issue #18 item 9): conflicting accesses to
one element from different programs, with no atomic between them, reported
with both programs, both kernel lines and the address; nothing for a kernel
whose programs touch disjoint data or share only atomics."""
from __future__ import annotations

import numpy as np
import pytest

import tritium as triton
import tritium.language as tl
from tritium.interpreter import DataRaceError, Sanitizer, run_grid

interp = triton.jit(interpret=True)


def _line(kernel, offset: int) -> str:
    return f"{__file__}:{kernel.fn.__code__.co_firstlineno + offset}"


@interp
def _same_address_store(y_ptr):
    pid = tl.program_id(0)
    tl.store(y_ptr, pid + 1)


@interp
def _read_modify_write(y_ptr):
    v = tl.load(y_ptr)
    tl.store(y_ptr, v + 1)


@interp
def _disjoint(x_ptr, y_ptr, total_ptr, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs)
    tl.store(y_ptr + offs, x * 2)
    tl.atomic_add(total_ptr, tl.sum(x, 0))
    tl.load(x_ptr)   # every program reads x[0]: reads never conflict


@interp
def _neighbours_fp16(y_ptr):
    # adjacent 2-byte elements: no shared element, no race
    tl.store(y_ptr + tl.program_id(0), tl.program_id(0).to(tl.float16))


@interp
def _plain_read_of_atomic_counter(c_ptr, out_ptr):
    tl.atomic_add(c_ptr, 1)
    tl.store(out_ptr + tl.program_id(0), tl.load(c_ptr))


def _races(kernel, grid, *args, batch=True, **kwargs):
    san = Sanitizer(races=True)
    run_grid(kernel, grid, args, kwargs=kwargs, clients=[san], batch=batch)
    return san.race_reports


def _at(loc) -> str:
    return f"{loc.file}:{loc.line}"


@pytest.mark.parametrize("batch", [True, False], ids=["batched", "one_at_a_time"])
def test_two_programs_storing_to_one_address(batch):
    reps = _races(_same_address_store, (4,), np.zeros(4, np.int32), batch=batch)
    assert len(reps) == 1
    r = reps[0]
    assert r.kind == "write/write" and r.where == "y_ptr[0]"
    assert r.first.pid == (0, 0, 0) and r.second.pid == (1, 0, 0)
    assert _at(r.first.loc) == _at(r.second.loc) == _line(_same_address_store, 3)
    assert r.count == 3   # programs 1, 2 and 3 each meet an earlier writer
    text = str(r)
    assert "write/write" in text and "y_ptr[0]" in text and f"address {r.address:#x}" in text
    assert "program (0, 0, 0)" in text and "program (1, 0, 0)" in text and _line(_same_address_store, 3) in text


@pytest.mark.parametrize("batch", [True, False], ids=["batched", "one_at_a_time"])
def test_read_modify_write_across_programs(batch):
    reps = _races(_read_modify_write, (3,), np.zeros(2, np.int32), batch=batch)
    kinds = {r.kind: r for r in reps}
    # one at a time, a later program also reads what an earlier one wrote
    assert set(kinds) == ({"read/write", "write/write"} if batch else {"read/write", "write/read", "write/write"})
    load_line, store_line = _line(_read_modify_write, 2), _line(_read_modify_write, 3)
    rw = kinds["read/write"]    # one program read y[0]; another then wrote it
    assert (_at(rw.first.loc), _at(rw.second.loc)) == (load_line, store_line)
    assert rw.first.pid != rw.second.pid
    if not batch:
        wr = kinds["write/read"]    # program 0 wrote y[0]; program 1 then read it
        assert (_at(wr.first.loc), _at(wr.second.loc)) == (store_line, load_line)


def test_race_free_kernel_reports_nothing():
    x = np.arange(64, dtype=np.int32)
    total = np.zeros(1, np.int32)
    assert _races(_disjoint, (4,), x, np.zeros(64, np.int32), total, BLOCK=16) == []
    assert total[0] == x.sum()
    assert _races(_neighbours_fp16, (8,), np.zeros(8, np.float16)) == []


def test_plain_access_to_an_atomically_updated_element_races():
    reps = _races(_plain_read_of_atomic_counter, (2,), np.zeros(1, np.int32), np.zeros(2, np.int32))
    assert {r.kind for r in reps} == {"atomic/read", "read/atomic"}


def test_shuffled_order_still_finds_the_race():
    for seed in range(3):
        san = Sanitizer(races=True)
        run_grid(_same_address_store, (5,), (np.zeros(1, np.int32),), clients=[san], shuffle=True, seed=seed)
        assert [r.kind for r in san.race_reports] == ["write/write"]


def test_env_var_turns_races_into_an_error(monkeypatch):
    monkeypatch.setenv("TRITIUM_INTERPRET", "1")
    monkeypatch.setenv("TRITIUM_SANITIZE_RACES", "1")
    with pytest.raises(DataRaceError, match=r"(?s)'_read_modify_write': 2 data race\(s\).*y_ptr\[0\]"):
        _read_modify_write[(2,)](np.zeros(2, np.int32))
    x = np.arange(64, dtype=np.int32)
    _disjoint[(4,)](x, np.zeros(64, np.int32), np.zeros(1, np.int32), BLOCK=16)   # no error
    monkeypatch.setenv("TRITIUM_SANITIZE_RACES", "0")
    _read_modify_write[(2,)](np.zeros(2, np.int32))
