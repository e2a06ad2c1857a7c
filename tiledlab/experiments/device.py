"""The card's own description, read from the driver: what every other experiment is judged against."""
from numba import cuda

from ..core.card import DEVICE_ATTRIBUTES
from . import require_gpu

ATTRIBUTES = {  # column → CUDA device attribute (CU_DEVICE_ATTRIBUTE_...); the card's limits from core.card
    "sms": "MULTIPROCESSOR_COUNT", "sm_clock_khz": "CLOCK_RATE", "memory_clock_khz": "MEMORY_CLOCK_RATE",
    "memory_bus_bits": "GLOBAL_MEMORY_BUS_WIDTH", "l2_bytes": "L2_CACHE_SIZE", **DEVICE_ATTRIBUTES,
    "warp_size": "WARP_SIZE"}
FP32_LANES_PER_SM = {(9, 0): 128, (8, 0): 64, (8, 6): 128, (8, 9): 128, (7, 0): 64}  # CUDA Programming Guide


def properties():
    """{column: value} for the current device, with the datasheet's FP32 and DRAM ceilings from its own figures."""
    require_gpu("device properties")
    dev = cuda.get_current_device()
    row = {col: int(getattr(dev, attr)) for col, attr in ATTRIBUTES.items()}
    row["fp32_lanes_per_sm"] = FP32_LANES_PER_SM.get(tuple(dev.compute_capability), 0)
    row["fp32_datasheet_tflops"] = fp32_datasheet_tflops(row["sms"], row["fp32_lanes_per_sm"], row["sm_clock_khz"])
    row["dram_datasheet_gbps"] = 2 * row["memory_clock_khz"] * 1e3 * row["memory_bus_bits"] / 8 / 1e9  # DDR bus
    return row


def fp32_datasheet_tflops(sms, lanes_per_sm, sm_clock_khz):
    """The datasheet's FP32 rate: SMs × FP32 lanes per SM × 2 FLOP per FMA × SM clock."""
    return sms * lanes_per_sm * 2 * sm_clock_khz * 1e3 / 1e12


def run():
    return [properties()]
