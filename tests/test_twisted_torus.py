"""Hop counts on plain and twisted tori (the chapter *TPU cluster topology*)."""
import numpy as np
import pytest

import collectives_lib as cl
from collectives_lib.topology import best_twist, torus_distances


def test_plain_torus_distances_by_hand():
    assert torus_distances((5,)).tolist() == [0, 1, 2, 2, 1]
    d = torus_distances((2, 4))                       # rank order: (0,0) (0,1) (0,2) (0,3) (1,0) ...
    assert d.tolist() == [0, 1, 2, 1, 1, 2, 3, 2]
    assert torus_distances((4, 4)).mean() == 2.0


def test_twisted_2x4_by_hand():
    # crossing the x wraparound also moves y by 2: (0,0) reaches (1,2) in one hop,
    # and every chip is within 2 hops (the plain 2x4 torus needs 3 to reach (1,2))
    d = torus_distances((2, 4), {0: (0, 2)})
    assert d.tolist() == [0, 1, 2, 1, 1, 2, 1, 2]
    assert d.mean() == 10 / 8 and d.max() == 2


def test_twists_agree_with_the_library_routes_when_zero():
    s = cl.tpu_slice("v5p", "4x4x8")
    hops = np.array([s.hops(0, r) for r in range(s.num_ranks)])
    assert np.array_equal(torus_distances((4, 4, 8), {2: (0, 0, 0)}), hops)


def test_best_twist_of_a_4x4x8_beats_the_plain_torus():
    twist, d = best_twist((4, 4, 8))
    plain = torus_distances((4, 4, 8))
    assert twist and d.mean() < plain.mean() and d.max() < plain.max()
    assert (d == 1).sum() == 6                         # still six neighbours


def test_bad_twists_are_named():
    with pytest.raises(cl.CollectivesError, match="twist maps an axis 0..1 to 2 shifts"):
        torus_distances((4, 4), {2: (0, 1)})
    with pytest.raises(cl.CollectivesError, match="dims must be positive"):
        torus_distances((0, 4))


def _lattice_distances(dims, twist, source):
    """Hops from ``source`` on the grid folded by the translations n_a e_a - twist[a]: an
    independent construction (a twisted axis's wrap shifts only untwisted axes)."""
    D = len(dims)

    def reduce(c):
        c = list(c)
        for a, shift in twist.items():
            q, c[a] = divmod(c[a], dims[a])
            for r in range(D):
                if r != a:
                    c[r] += q * shift[r]
        return tuple(v % dims[r] if r not in twist else v for r, v in enumerate(c))

    start = reduce(source)
    dist, frontier = {start: 0}, [start]
    while frontier:
        nxt = []
        for c in frontier:
            for a in range(D):
                for step in (1, -1):
                    n = reduce(c[:a] + (c[a] + step,) + c[a + 1:])
                    if n not in dist:
                        dist[n] = dist[c] + 1
                        nxt.append(n)
        frontier = nxt
    return dist


def test_a_two_axis_twist_beats_every_one_axis_twist_of_a_4x4x8():
    one, d1 = best_twist((4, 4, 8), max_axes=1)
    two, d2 = best_twist((4, 4, 8))
    assert len(one) == 1 and len(two) == 2 and d2.mean() < d1.mean() < torus_distances((4, 4, 8)).mean()
    # every chip sees the same distances, and the grid folds onto exactly 128 chips
    for source in [(0, 0, 0), (1, 2, 3), (3, 3, 7)]:
        dist = _lattice_distances((4, 4, 8), two, source)
        assert len(dist) == 128 and sorted(dist.values()) == sorted(d2.tolist())


def test_best_twist_max_axes_is_checked():
    with pytest.raises(cl.CollectivesError, match="max_axes must be a whole number from 1 to 2"):
        best_twist((4, 4, 8), max_axes=3)
    with pytest.raises(cl.CollectivesError, match="max_axes must be a whole number from 1 to 1"):
        best_twist((4, 4), max_axes=0)
