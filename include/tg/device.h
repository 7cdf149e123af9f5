/* tensorgraph devices and placement: device names, device scopes while
 * building a graph (TensorFlow's tf.device), where each node is placed,
 * and the devices a session spreads a graph over. A session whose graph
 * has placed nodes, or that was given devices, partitions each run into
 * one subgraph per device joined by Send/Recv pairs and runs the
 * partitions concurrently (docs/DISTRIBUTED.md). */
#ifndef TG_DEVICE_H
#define TG_DEVICE_H

#include "tg/runtime.h"

#ifdef __cplusplus
extern "C" {
#endif
#pragma GCC visibility push(default) /* the public API: see tg/core.h */

/* ---- names -------------------------------------------------------------------
 * "cpu:N" or "/rank:R/cpu:N" (R the MPI rank of the process the device
 * belongs to; without it, rank 0). N and R are decimal, 0 .. 65535.
 * "cpu" alone means cpu:0. Errors name the text and what was expected. */
tg_status tg_device_parse(const char *name, tg_device *out);
/* the canonical name into buf ("cpu:1", "/rank:1/cpu:0"); returns buf */
const char *tg_device_str(tg_device d, char *buf, size_t len);
bool tg_device_eq(tg_device a, tg_device b);

/* ---- device scopes -------------------------------------------------------------
 * Between tg_device_scope_begin(name) and tg_device_scope_end() (per
 * thread, nestable, the innermost wins) every node appended to any graph
 * is placed on that device. Nodes made outside any scope are unplaced;
 * a session places them (see tg_session_set_devices). A
 * scope that leaves nodes unplaced (tf.device(None)) is opened with "". */
tg_status tg_device_scope_begin(const char *name);
tg_status tg_device_scope_end(void); /* fails when no device scope is open */

/* ---- the placement of a node ------------------------------------------------------
 * The node producing t: placed on device `name` (NULL: unplaced). */
tg_status tg_graph_set_device(tg_tensor *t, const char *name);
/* its device's name into buf, or "" when unplaced; NULL on error */
const char *tg_graph_device(const tg_tensor *t, char *buf, size_t len);

/* ---- sessions over several devices --------------------------------------------------
 * The devices a session spreads the graph over: nodes placed by scopes
 * keep their device; the others are placed by the automatic placer
 * (a cost model of each node's FLOPs and bytes: it balances the devices'
 * work and keeps the bytes that cross devices small). Colocation: a
 * variable, the assigns that update it and the nodes that read it only
 * to update it stay on one device. n = 0 clears the list (then only the
 * devices the graph's nodes name are used; a graph with no placed node
 * runs unpartitioned). Drops the cached plans. Devices of other ranks
 * ("/rank:1/cpu:0") are accepted for partitioning, but a run needs a
 * transport to them (the MPI layer). */
tg_status tg_session_set_devices(tg_session *s, int n, const char *const *names);

/* The placement a run of this signature uses, per node of the session's
 * graph: device[i] for node i (n_nodes entries; unplaced nodes a run
 * does not need: type TG_CPU, index -1). Places (and caches) as a run
 * would. */
tg_status tg_session_placement(tg_session *s, int n_feeds, tg_tensor *const *feed_values,
                               int n_fetches, tg_tensor *const *fetch_values,
                               int n_targets, tg_tensor *const *targets, int n_nodes,
                               tg_device *device);

/* A picture of the partitioned run of this signature (Graphviz DOT): one
 * cluster per device, nodes coloured by device, every Send and its Recv
 * joined by a bold edge. The file is replaced atomically. */
tg_status tg_session_partitions_to_dot(tg_session *s, int n_feeds,
                                       tg_tensor *const *feed_values, int n_fetches,
                                       tg_tensor *const *fetch_values, int n_targets,
                                       tg_tensor *const *targets, const char *path);

/* Variables placed on devices of other processes (the master/worker runs
 * of tg/dist.h) live and change there. This copies their current values
 * back into the tensors this process's graph holds (tg_variable_ref's
 * tensors, a module's parameters), so that eager code, checkpoints and
 * exports here see the trained values. A variable the automatic placer
 * put on another process keeps that device for the session's later runs.
 * Nothing to do (TG_OK) when no variable lives elsewhere. */
tg_status tg_session_pull_variables(tg_session *s);

#pragma GCC visibility pop

#ifdef __cplusplus
}
#endif
#endif
