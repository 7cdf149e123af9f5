"""tensorgraph.distributed: PyTorch's torch.distributed names over MPI
(tg/dist.h). Start the program with `mpirun -np N python3 script.py`; a
program started without mpirun is one process (rank 0 of 1).

    import tensorgraph.distributed as dist
    dist.init_process_group(backend="mpi")
    dist.all_reduce(t, op=dist.ReduceOp.SUM)

Collectives run in place on contiguous float32/float64/int32/int64
tensors and wait without the GIL. A peer that dies or hangs makes the
waiting call raise RuntimeError naming the lost rank (never a hang);
tensorgraph was built without MPI: every call raises RuntimeError saying so."""
import enum

from .. import _C

__all__ = ['ReduceOp', 'Work', 'is_available', 'is_mpi_available', 'init_process_group',
           'is_initialized', 'destroy_process_group', 'get_rank', 'get_world_size',
           'get_backend', 'all_reduce', 'broadcast', 'barrier', 'group', 'serve']


class ReduceOp(enum.IntEnum):
    """what all_reduce combines with (AVG: the sum divided by the world size)"""
    SUM = 0
    AVG = 1
    MAX = 2
    MIN = 3


class group:
    """the one process group there is: the world (PyTorch's group.WORLD)"""
    WORLD = None


class Work:
    """what async_op=True returns: the collective has already completed (it
    ran to the end before returning), so wait() returns at once"""

    def wait(self, timeout=None):
        return True

    def is_completed(self):
        return True


_backend = None


def is_available():
    return True


def is_mpi_available():
    return bool(_C._dist_built())


def init_process_group(backend=None, init_method=None, timeout=None, world_size=-1, rank=-1,
                       store=None, group_name='', pg_options=None, device_id=None):
    """joins the MPI world started by mpirun. backend "mpi" (or None); "gloo"
    is accepted as the CPU backend PyTorch scripts name and runs over MPI
    too; "nccl" needs GPUs. world_size and rank, when given, must be the
    ones mpirun gave. timeout (a datetime.timedelta or seconds) is how
    long a silent peer is waited for before it counts as lost."""
    global _backend
    name = (backend or 'mpi').lower()
    if name not in ('mpi', 'gloo'):
        raise ValueError(f"init_process_group: backend {backend!r} is not available: "
                         "tensorgraph runs on CPUs over MPI (backend='mpi')")
    if is_initialized():
        raise RuntimeError("trying to initialize the default process group twice!")
    _C._dist_init()
    if timeout is not None:
        secs = timeout.total_seconds() if hasattr(timeout, 'total_seconds') else float(timeout)
        _C._dist_set_timeout(secs)
    for what, given, actual in (('world_size', world_size, _C._dist_world_size()),
                                ('rank', rank, _C._dist_rank())):
        if given is not None and given != -1 and given != actual:
            _C._dist_finalize()
            raise ValueError(f"init_process_group: {what}={given}, but mpirun started this "
                             f"process with {what} {actual}")
    _backend = name


def is_initialized():
    return _backend is not None and bool(_C._dist_is_initialized())


def _need_init(fn):
    if not is_initialized():
        raise RuntimeError(f"{fn}: Default process group has not been initialized, please "
                           "make sure to call init_process_group.")


def serve():
    """Makes this process a worker of rank 0 (the master): it runs the parts
    of rank 0's tg.function graphs placed on its devices (under
    tg.device('/rank:R/cpu:N')) until rank 0 calls destroy_process_group,
    then returns. Call it on every rank but 0 after init_process_group;
    rank 0 runs the program. A lost master raises RuntimeError naming it."""
    _need_init('serve')
    if get_rank() == 0:
        raise RuntimeError("serve: rank 0 is the master (it runs the program); the other "
                           "ranks serve it")
    _C._dist_serve()


def destroy_process_group(group=None):
    global _backend
    _need_init('destroy_process_group')
    _backend = None
    _C._dist_finalize()


def get_rank(group=None):
    _need_init('get_rank')
    return _C._dist_rank()


def get_world_size(group=None):
    _need_init('get_world_size')
    return _C._dist_world_size()


def get_backend(group=None):
    _need_init('get_backend')
    return _backend


def _done(async_op):
    return Work() if async_op else None


def all_reduce(tensor, op=ReduceOp.SUM, group=None, async_op=False):
    """tensor (in place) becomes the op of every rank's tensor"""
    _need_init('all_reduce')
    _C._dist_allreduce(tensor, int(ReduceOp(op)))
    return _done(async_op)


def broadcast(tensor, src, group=None, async_op=False):
    """every rank's tensor (in place) becomes rank src's"""
    _need_init('broadcast')
    _C._dist_broadcast(tensor, int(src))
    return _done(async_op)


def barrier(group=None, async_op=False, device_ids=None):
    _need_init('barrier')
    _C._dist_barrier()
    return _done(async_op)
