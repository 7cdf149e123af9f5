/* The master's commands to a worker and the worker's answers (master.c,
 * worker.c), on the communicator of their own (tg__dist_ctl_comm). Each
 * is one message of io/wire.h records. A partition is named by its plan
 * and its device's index on that rank: a worker may hold several devices
 * and run their partitions of a step at once.
 *
 *   command (tag TAG_COMMAND, rank 0 -> worker): u8 kind  u64 plan  u32 device
 *     LOAD: str device name  u64 n  graph bytes (graph/serialize.h)
 *           u32 n str feed...  u32 n str fetch...  u32 n str target...
 *           (feeds: placeholder names; fetches: value names "node:i";
 *            targets: node names)
 *     RUN:  u64 step  u32 partitions of the step on this rank (they share
 *           its rendezvous)  u8 traced  u32 n  tensor...   (the feeds, in
 *           LOAD's order)
 *     ASSIGN: u64 variable key  tensor   (the master's variable changed there:
 *           the worker's copy becomes that value; no answer)
 *     DROP, STOP: nothing more
 *   answer (tag TAG_ANSWER + device, worker -> rank 0), to LOAD and RUN:
 *     u32 status  str message  [RUN, status 0: u32 n  tensor... (fetches)
 *     [traced: u64 when the command came  u64 when answered (the worker's
 *      clock)  the run's spans (tg__session_trace_export's records)]]
 */
#ifndef TG_DIST_PROTOCOL_H
#define TG_DIST_PROTOCOL_H

enum { TAG_COMMAND = 1, TAG_ANSWER = 16 };
enum { CMD_LOAD = 1, CMD_RUN = 2, CMD_DROP = 3, CMD_STOP = 4, CMD_ASSIGN = 5 };
/* device indexes a worker's partitions may have (answer tags stay below
 * the 32 767 every MPI allows) */
#define MAX_WORKER_DEVICE 30000

#endif
