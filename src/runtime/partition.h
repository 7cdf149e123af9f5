/* Placement and partitioning (TensorFlow's Placer and graph partitioner):
 * every node a run needs gets a device (placement.c), and the needed part
 * of the graph is cut into one graph per device (partition.c). Every
 * value that crosses devices becomes one Send on its producer's device
 * and one Recv on each device that reads it, matched by the rendezvous
 * key (the value's name, source and destination devices, the step);
 * control and ordering edges that cross devices become Send/Recv pairs of
 * tokens. Fed values become placeholders on each device that reads them;
 * constants are copied (by reference) to each device that reads them;
 * variables stay on their device, read elsewhere through a Send. */
#ifndef TG_PARTITION_H
#define TG_PARTITION_H

#include "runtime/runtime_impl.h"

/* what a run asks for, as ids of the graph as built */
typedef struct tg_run_sig {
    int n_feeds, n_fetches, n_targets;
    const int *feeds, *fetches; /* value ids */
    const int *targets;         /* node ids */
} tg_run_sig;

/* ---- placement (placement.c) ------------------------------------------------------
 * needed[i]: node i runs (tg__partition_needed). devices[0..n_devices):
 * the session's devices (may be 0: then those the nodes name). On
 * success *out_devices (malloc'd, *n_out entries: the session's devices,
 * then those only nodes name) and part[i], the index of node i's device
 * (-1 for nodes not needed). Colocation: a variable, the nodes that
 * write it (assigns, random ops advancing a generator) and the views of
 * it are one group; a group with two explicit devices is an error naming
 * both. Unplaced groups are placed by the cost model. */
tg_status tg__place(const tg_graph *g, const bool *needed, int n_devices,
                    const tg_device *devices, tg_device **out_devices, int *n_out,
                    int *part);

/* The automatic placer (placement_cost.c): up[] the colocation groups
 * (union-find parents; a group is its lowest id), part[leader] the
 * device index of groups placed already, -1 for the others, which it
 * places on one of the n_devices devices. */
tg_status tg__place_by_cost(const tg_graph *g, const bool *needed, int *up, int n_devices,
                            int *part);

/* ---- partitioning (partition.c) --------------------------------------------------- */
typedef struct tg_partition {
    tg_device device;
    tg_graph *g;
    /* feeds: the partition's placeholder for original value feed_of[i] */
    int n_feeds;
    tg_tensor **feed_vals;
    int *feed_of;
    /* fetches: the partition's value for the original value fetch_of[i] */
    int n_fetches;
    tg_tensor **fetch_vals;
    int *fetch_of;
    /* targets: Send nodes and the original targets placed here */
    int n_targets;
    tg_tensor **targets; /* a symbolic tensor of each target node */
    int n_send, n_recv;
} tg_partition;

typedef struct tg_partitioning {
    int n;
    tg_partition *parts;
    int n_nodes;   /* of the graph as built */
    int *part;     /* per node: index into parts, -1 when not needed */
    int64_t cut_bytes; /* bytes the Sends of one run carry */
} tg_partitioning;

/* the nodes a run of sig needs (needed: n_nodes entries, zeroed); an
 * unfed placeholder it reaches is an error naming it */
tg_status tg__partition_needed(const tg_graph *g, const tg_run_sig *sig, const bool *fed,
                               bool *needed);
/* places and partitions the part of g that sig needs; feed_meta (per
 * value of g; NULL: the declared metadata) gives the fed shapes, which
 * the partitions are specialised to (a Recv's shape must be known) */
tg_status tg__partition(const tg_graph *g, const tg_run_sig *sig, const bool *fed,
                        const tg_meta *feed_meta, int n_devices, const tg_device *devices,
                        tg_partitioning *out);
void tg__partitioning_free(tg_partitioning *p);
/* Graphviz DOT of the partitions (partition_dot.c): a cluster per device,
 * nodes filled with the device's colour, each Send joined to its Recv */
tg_status tg__partitions_to_dot(const tg_partitioning *p, const char *path);

#endif
