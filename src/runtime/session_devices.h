/* Sessions over several devices (session_devices.c): the devices a
 * session was given, its cached partitionings (one per run signature:
 * the partition graphs and a session per partition, which compiles and
 * caches that partition's plan and memory plan), and the partitioned run:
 * one thread per device, a rendezvous per run, the first error aborting
 * every partition. */
#ifndef TG_SESSION_DEVICES_H
#define TG_SESSION_DEVICES_H

#include "runtime/partition.h"
#include "runtime/rendezvous.h"

/* the device executor (device_exec.c), an executor kind of sessions made
 * for partitions only */
#define TG__EXECUTOR_DEVICE 2
tg_status tg__plan_execute_device(tg_exec *x);

typedef struct tg_dsession tg_dsession;

/* does a run of g need partitioning: devices were set, or a node of g is
 * placed? Never for a control-flow body: it runs whole on the device of
 * its control node (its nodes keep the device scope they were traced in,
 * for pictures only) */
bool tg__devices_wanted(const tg_dsession *d, const tg_graph *g);
tg_status tg__devices_run(tg_session *s, tg_dsession **d, const tg_graph *g,
                          const tg_run_sig *sig, const bool *fed, const tg_meta *feed_meta,
                          tg_tensor *const *feed_tensors, tg_tensor **results);
/* drops the cached partitionings (options changed); keeps the devices */
void tg__devices_drop(tg_dsession *d);
void tg__devices_free(tg_dsession *d);

/* Runs one partition on this thread as device `device` of step `step`
 * (the rendezvous of that step; tid its trace track): what a thread of a
 * partitioned run does, and what a worker process does with a partition
 * it was sent. sub is the partition's session, made to use the device
 * executor (tg__session_inherit, or tg__session_device_executor). A
 * failure aborts the rendezvous with "device D: <the error>". */
tg_status tg__device_run(tg_session *sub, tg_device device, tg_rendezvous *rv, int64_t step,
                         int tid, int n_feeds, tg_tensor *const *feed_values,
                         tg_tensor *const *feed_tensors, int n_fetches,
                         tg_tensor *const *fetch_values, tg_tensor **results, int n_targets,
                         tg_tensor *const *targets);
/* a session (of a partition) that runs its plans with the device executor */
void tg__session_device_executor(tg_session *s);

/* session.c, for partitions' sessions */
tg_status tg__session_inherit(const tg_session *parent, tg_session *sub);
void tg__session_trace_sync(const tg_session *parent, tg_session *sub);
tg_status tg__session_trace_adopt(tg_session *parent, tg_session *sub, const char *track,
                                  int tid);
void tg__session_trace_next(tg_session *s);
void tg__session_count_ops(tg_session *parent, const tg_session *sub, bool first);
/* traces across processes: a worker's partition session traces its runs
 * (trace_on), hands their spans over as wire records (export: u32 n, then
 * str node, str op, u64 t0, u64 t1 each) and the master adopts them on
 * the device's track, shifted by offset_ns into its clock (import) */
bool tg__session_tracing(const tg_session *s);
void tg__session_trace_on(tg_session *s);
struct tg_strbuf;
struct tg_wire_reader;
tg_status tg__session_trace_export(tg_session *s, struct tg_strbuf *b);
tg_status tg__session_trace_import(tg_session *parent, struct tg_wire_reader *r,
                                   const char *track, int tid, int64_t offset_ns);
tg_dsession **tg__session_devices(tg_session *s);
tg_graph *tg__session_graph(tg_session *s);

#endif
