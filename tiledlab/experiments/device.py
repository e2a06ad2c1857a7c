"""The card's own description, read from the driver: what every other experiment is judged against."""
from numba import cuda

from . import require_gpu

ATTRIBUTES = {  # column → CUDA device attribute (CU_DEVICE_ATTRIBUTE_...)
    "sms": "MULTIPROCESSOR_COUNT",
    "sm_clock_khz": "CLOCK_RATE",
    "memory_clock_khz": "MEMORY_CLOCK_RATE",
    "memory_bus_bits": "GLOBAL_MEMORY_BUS_WIDTH",
    "l2_bytes": "L2_CACHE_SIZE",
    "shared_per_block_bytes": "MAX_SHARED_MEMORY_PER_BLOCK",
    "shared_per_block_optin_bytes": "MAX_SHARED_MEMORY_PER_BLOCK_OPTIN",
    "shared_per_sm_bytes": "MAX_SHARED_MEMORY_PER_MULTIPROCESSOR",
    "registers_per_sm": "MAX_REGISTERS_PER_MULTIPROCESSOR",
    "registers_per_block": "MAX_REGISTERS_PER_BLOCK",
    "threads_per_sm": "MAX_THREADS_PER_MULTIPROCESSOR",
    "blocks_per_sm": "MAX_BLOCKS_PER_MULTIPROCESSOR",
    "warp_size": "WARP_SIZE",
}
FP32_LANES_PER_SM = {(9, 0): 128, (8, 0): 64, (8, 6): 128, (8, 9): 128, (7, 0): 64}  # CUDA Programming Guide


def properties():
    """{column: value} for the current device."""
    require_gpu("device properties")
    dev = cuda.get_current_device()
    row = {col: int(getattr(dev, attr)) for col, attr in ATTRIBUTES.items()}
    row["fp32_lanes_per_sm"] = FP32_LANES_PER_SM.get(tuple(dev.compute_capability), 0)
    # The datasheet's two ceilings, from the driver's own figures: lanes × 2 FLOP × clock, and a
    # double-data-rate bus (2 transfers per memory clock) of memory_bus_bits.
    row["fp32_datasheet_tflops"] = row["sms"] * row["fp32_lanes_per_sm"] * 2 * row["sm_clock_khz"] * 1e3 / 1e12
    row["dram_datasheet_gbps"] = 2 * row["memory_clock_khz"] * 1e3 * row["memory_bus_bits"] / 8 / 1e9
    return row


def run():
    return [properties()]
