"""Every hardware figure has a source, and the book's quoted figures hold."""
import pytest

from collectives_lib import hardware as hw


def test_every_figure_has_a_known_source():
    figures = hw.all_figures()
    assert len(figures) > 40
    for name, fig in figures:
        assert fig.source in hw.SOURCES, name
        assert fig.value > 0, name
        title, url = hw.SOURCES[fig.source]
        assert title


@pytest.mark.parametrize("gen, shape, chips", [
    ("v4", (16, 16, 16), 4096), ("v5p", (16, 20, 28), 8960), ("v5e", (16, 16), 256),
    ("v6e", (16, 16), 256),
])
def test_pod_shapes(gen, shape, chips):
    g = hw.tpu(gen)
    assert g.pod_shape == shape
    assert g.pod_chips == chips


def test_quoted_figures():
    assert float(hw.tpu("v5e").ici_bandwidth) == 45e9          # 45 KB per microsecond
    assert hw.tpu("v5e").host_shape == (2, 4)
    assert float(hw.gpu_system("dgx-h100").nvlink_bandwidth) == 450e9
    assert hw.gpu_system("dgx-h100").node_injection == 400e9   # 8 x 50 GB/s rails
    assert float(hw.NVLINK_GENERATIONS["A100 (NVLink 3)"]) == 600e9
    assert float(hw.NVLINK_GENERATIONS["Rubin (NVLink 6)"]) == 3.6e12
    assert float(hw.LADDER["PCIe Gen5 x16 (one way)"]) == 64e9
    assert float(hw.LADDER["InfiniBand XDR (800 Gb/s NIC)"]) == 100e9


def test_unknown_generation_message():
    with pytest.raises(ValueError, match="unknown TPU generation 'v9'; known:"):
        hw.tpu("v9")
    with pytest.raises(ValueError, match="unknown GPU system 'dgx-a1'"):
        hw.gpu_system("dgx-a1")


def test_scaling_book_pcie_and_vmem_figures_of_the_cited_edition():
    # February 2025 edition: "typically around 1.5e10 bytes / second per chip",
    # 16 GB/s each way on v4, 32 GB/s on v6e; VMEM about 22x HBM on v5e
    assert "February 2025" in hw.SOURCES["scaling-book"][0]
    assert float(hw.tpu("v5e").pcie_bandwidth) == 1.5e10
    assert float(hw.tpu("v5p").pcie_bandwidth) == 1.5e10
    assert float(hw.tpu("v4").pcie_bandwidth) == 1.6e10
    assert float(hw.tpu("v6e").pcie_bandwidth) == 3.2e10
    v5e = hw.tpu("v5e")
    assert float(v5e.vmem_bandwidth) == pytest.approx(22 * float(v5e.hbm_bandwidth), rel=2e-3)
    assert float(v5e.vmem_capacity) == 128 * 2**20
