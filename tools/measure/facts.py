"""The few facts of the card that the latency and roof measurements judge their numbers by."""
from dataclasses import dataclass, fields

from tiledlab.experiments import require_gpu
from tiledlab.experiments.device import fp32_datasheet_tflops, properties


@dataclass(frozen=True)
class Facts:
    """What the latency and roof experiments judge their numbers by: a few of `properties()`."""
    sms: int
    sm_clock_khz: int  # the maximum the device reports
    fp32_lanes_per_sm: int
    l2_bytes: int
    dram_datasheet_gbps: float

    @classmethod
    def of(cls, row):
        """The facts in a row of properties (a dict, or a row of the committed device.csv)."""
        return cls(**{f.name: row[f.name] for f in fields(cls)})

    @property
    def sm_clock_mhz(self):
        return self.sm_clock_khz / 1000

    @property
    def fp32_datasheet_tflops(self):
        return fp32_datasheet_tflops(self.sms, self.fp32_lanes_per_sm, self.sm_clock_khz)


def device_facts(what="this experiment"):
    """The current device's Facts; `what` names the experiment in the error without a GPU."""
    require_gpu(what)
    return Facts.of(properties())
