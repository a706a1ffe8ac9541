"""Tests for the chapter *Inside all-gather: rings, chains and two axes*:
arrival_steps against the schedules' known patterns, the 2D all-gather against
its derivation, and the FSDP calculator (collectives_lib.book.workloads.fsdp_layer)."""

from __future__ import annotations

import math

import numpy as np
import pytest

import collectives_lib as cl
from collectives_lib import hardware as hw
from collectives_lib.book.workloads import fsdp_layer

V5E = hw.tpu("v5e")
W = float(V5E.ici_bandwidth)
ALPHA = float(V5E.ici_latency)


# -- arrival_steps -----------------------------------------------------------------

@pytest.mark.parametrize("n", [2, 3, 4, 7, 8], ids=lambda n: f"ring{n}")
def test_arrivals_unidirectional_ring(n):
    r, b = np.meshgrid(np.arange(n), np.arange(n), indexing="ij")
    assert (cl.arrival_steps(cl.build("all_gather", n, "ring")) == (r - b) % n).all()


@pytest.mark.parametrize("n", [3, 4, 5, 8], ids=lambda n: f"bidi{n}")
def test_arrivals_bidirectional_ring(n):
    r, b = np.meshgrid(np.arange(n), np.arange(n), indexing="ij")
    d = np.minimum((r - b) % n, (b - r) % n)
    got = cl.arrival_steps(cl.build("all_gather", n, "bidirectional_ring"))
    assert (got == d).all() and got.max() == math.ceil((n - 1) / 2)


@pytest.mark.parametrize("n", [2, 4, 6], ids=lambda n: f"chain{n}")
def test_arrivals_chain(n):
    r, b = np.meshgrid(np.arange(n), np.arange(n), indexing="ij")
    assert (cl.arrival_steps(cl.build("all_gather", n, "chain")) == abs(r - b)).all()


def test_arrivals_of_embedded_groups_and_per_slot():
    s44 = cl.tpu_slice("v5e", "4x4")
    sched = cl.build("all_gather", s44, "chain", axes="x")
    arr = cl.arrival_steps(sched)
    assert arr.shape == (16, 4)
    # ranks are x*4 + y; along x the local block index is x
    x = np.arange(16) // 4
    assert (arr == abs(x[:, None] - np.arange(4)[None, :])).all()
    torus = cl.Torus((4, 4), bandwidth=W)
    two_d = cl.build("all_gather", torus, "multi_axis")
    per_slot = cl.arrival_steps(two_d, per_slot=True)
    per_block = cl.arrival_steps(two_d)
    # 16 blocks, each in 2 parts (one per axis order) of 2 halves (the block opposite
    # its owner on a ring of 4 goes half each way)
    assert per_slot.shape == (16, 64) and per_block.shape == (16, 16)
    assert (per_block == per_slot.reshape(16, 16, 4).max(axis=2)).all()
    assert per_block.max() == two_d.num_steps


def test_arrivals_rejects_other_collectives():
    with pytest.raises(cl.ScheduleError, match="arrival_steps is for all-gather schedules, got a all_reduce"):
        cl.arrival_steps(cl.build("all_reduce", 4, "ring"))


# -- the 2D all-gather ---------------------------------------------------------------

@pytest.mark.parametrize("n", [4, 8, 16], ids=lambda n: f"torus{n}x{n}")
def test_2d_all_gather_against_its_derivation(n):
    torus = cl.Torus((n, n), bandwidth=W, latency=ALPHA)
    V = 2 * n * n * 10**6
    both = cl.simulate(cl.build("all_gather", torus, "multi_axis"), torus, V).time
    seq = cl.simulate(cl.build("all_gather", torus, "sequential_axes"), torus, V).time
    h = n // 2                     # steps per axis; the last moves half blocks
    N = n * n
    # each axis: h steps of latency, and (n-1)/2 blocks' worth of bandwidth per link
    assert both == pytest.approx(2 * h * ALPHA + (n - 1) / 2 * (V / (2 * N * W) + n * V / (2 * N * W)))
    assert both == pytest.approx(cl.costs.mesh_all_gather((n, n), V, W, ALPHA))
    # twice as fast as one axis at a time (bandwidth terms), and (1 - 1/n^2) V / (4W): the bound
    assert seq - 2 * h * ALPHA == pytest.approx(2 * (both - 2 * h * ALPHA))
    assert both - 2 * h * ALPHA == pytest.approx(V / (4 * W) * (1 - 1 / N))
    # the first version sent the opposite block whole, (1 + 1/n) V / (4W)
    whole = cl.costs.mesh_all_gather((n, n), V, W, ALPHA, whole=True)
    assert whole - 2 * h * ALPHA == pytest.approx(V / (4 * W) * (1 + 1 / n))


# -- FSDP ----------------------------------------------------------------------------

def test_fsdp_layer_on_a_v5e_ring():
    pod = cl.tpu_pod("v5e")
    params = 12 * 8192 ** 2
    f = fsdp_layer(pod, params, tokens_per_chip=4096, axes="x")
    V = params * 2
    assert f.algorithm == "bidirectional_ring" and f.group_size == 16
    assert f["all-gather"].seconds == pytest.approx(cl.costs.bidirectional_ring_all_gather(16, V, W, ALPHA))
    peak = float(V5E.peak_flops_bf16)
    assert f["compute"].seconds == pytest.approx(2 * params * 4096 / peak)
    assert f.break_even_tokens == pytest.approx(f["all-gather"].seconds / (2 * params / peak))
    # the rule of thumb C / (2W): the ring moves (N-1)/N of V / (2W), up to the latency term
    assert f.break_even_tokens == pytest.approx(peak / (2 * W) * 15 / 16, rel=2e-3)
    assert f.bottleneck.name == "compute"


def test_fsdp_layer_chain_and_2d():
    params = 12 * 8192 ** 2
    ring = fsdp_layer(cl.tpu_pod("v5e"), params, 4096)
    chain = fsdp_layer(cl.tpu_slice("v5e", "16x16", wraparound=False), params, 4096)
    both = fsdp_layer(cl.tpu_pod("v5e"), params, 4096, axes=("x", "y"))
    assert chain.algorithm == "chain" and both.algorithm == "multi_axis"
    # a chain of 16 moves 15/16 V / W, the ring at the bound 15/32 V / W
    assert chain["all-gather"].seconds == pytest.approx(2 * ring["all-gather"].seconds, rel=1e-3)
    assert both["all-gather"].seconds < 0.6 * ring["all-gather"].seconds


@pytest.mark.parametrize("kwargs, message", [
    ({"params": 0, "tokens_per_chip": 1}, "params must be positive, got 0"),
    ({"params": 10**6, "tokens_per_chip": 0}, "tokens_per_chip must be a whole number >= 1, got 0"),
], ids=["params", "tokens"])
def test_fsdp_layer_errors(kwargs, message):
    with pytest.raises(cl.CollectivesError, match=message):
        fsdp_layer(cl.tpu_pod("v5e"), **kwargs)


def test_fsdp_layer_needs_peak_flops_without_a_tpu():
    ring = cl.Ring(8, bandwidth=W)
    with pytest.raises(cl.CollectivesError, match="pass peak_flops="):
        fsdp_layer(ring, 10**6, 10)
    f = fsdp_layer(ring, 10**6, 10, peak_flops=1e12)
    assert f["compute"].seconds == pytest.approx(2e7 / 1e12)
