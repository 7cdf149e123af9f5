"""tensorgraph.autograd.profiler: PyTorch's legacy profiler API (the
profile context whose results are read after the block, record_function)
over the same recorder as tensorgraph.profiler."""
from .profiler import EventList, FunctionEvent, FunctionEventAvg, _Recorder, record_function

__all__ = ['profile', 'record_function', 'EventList', 'FunctionEvent', 'FunctionEventAvg']


class profile(_Recorder):
    """torch.autograd.profiler.profile: records the ops of its with block
    (nothing when enabled is False); read function_events, key_averages(),
    table() after it"""

    def __init__(self, enabled=True, *, use_cuda=False, record_shapes=False, with_flops=False,
                 profile_memory=False, with_stack=False, with_modules=False, use_kineto=False,
                 use_cpu=True, experimental_config=None):
        super().__init__(record_shapes, {'use_cuda': use_cuda, 'with_flops': with_flops,
                                         'profile_memory': profile_memory,
                                         'with_stack': with_stack, 'with_modules': with_modules})
        self.enabled = enabled
        self.function_events = None

    def __enter__(self):
        if self.enabled:
            self._start_recording()
        return self

    def __exit__(self, *exc):
        if self.enabled:
            self._stop_recording()
            self.function_events = self._events
        return False

    def table(self, sort_by=None, row_limit=100, max_src_column_width=75,
              max_name_column_width=55, max_shapes_column_width=80, header=None,
              top_level_events_only=False):
        return self.events().table(sort_by, row_limit, max_src_column_width,
                                   max_name_column_width, max_shapes_column_width, header,
                                   top_level_events_only)

    def total_average(self):
        return self.events().total_average()

    @property
    def self_cpu_time_total(self):
        return self.events().self_cpu_time_total

    def __str__(self):
        return self.table()
