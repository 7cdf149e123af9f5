/* tensorgraph modules (PyTorch's torch.nn): layers that own their
 * parameters and buffers, containers with named children, train/eval
 * mode, PyTorch's state_dict naming and default initialisation. */
#ifndef TG_NN_H
#define TG_NN_H

#include "tg/io.h"
#include "tg/ops.h"

#ifdef __cplusplus
extern "C" {
#endif
#pragma GCC visibility push(default) /* the public API: see tg/core.h */

/* ---- ownership -------------------------------------------------------------
 * A module is owned by whoever created it and freed with tg_module_free,
 * which frees its children and releases its parameters and buffers. A
 * module added to a parent (tg_module_add, tg_nn_sequential) belongs to
 * the parent from then on, also when adding fails (it is then freed), so
 * constructors can be nested without leaks:
 *     tg_module_add(net, "fc", tg_nn_linear(4, 2, true, gen));
 * Parameters and buffers are created outside any scope and live as long
 * as their module. Functions returning a tensor from a module return a
 * borrowed pointer (tg_retain it to keep it longer). */
typedef struct tg_module tg_module;

/* the module's computation: x -> y. Built-in modules and custom ones
 * alike are called through tg_module_forward. */
typedef tg_tensor *(*tg_module_forward_fn)(tg_module *m, tg_tensor *x);

/* Runs m on x: returns a new reference (owned by the current scope, like
 * any op's result) or NULL with tg_last_error() set. Errors raised inside
 * a container name the failing child: "module conv1 (Conv2d): conv2d: ..." */
tg_tensor *tg_module_forward(tg_module *m, tg_tensor *x);
void tg_module_free(tg_module *m); /* NULL is ignored */

/* ---- layers ----------------------------------------------------------------
 * Each returns a new module in training mode, or NULL with an error.
 * Parameters are float32 and require grad. Weights of Linear and Conv2d
 * are drawn like PyTorch's reset_parameters: kaiming_uniform with
 * a = sqrt(5), i.e. U(-bound, bound) with bound = gain * sqrt(3 / fan_in)
 * and gain = sqrt(2 / (1 + a^2)) (so bound = 1 / sqrt(fan_in)); biases from
 * U(-1 / sqrt(fan_in), 1 / sqrt(fan_in)). The weight is drawn first, then
 * the bias, each in C order, from g (which is only used while constructing). */

/* y = x @ weight^T + bias; weight [out, in], bias [out] */
tg_module *tg_nn_linear(int64_t in_features, int64_t out_features, bool bias,
                        tg_generator *g);
/* weight [out, in / groups, kh, kw], bias [out] (fan_in = in / groups *
 * kh * kw). opts NULL means stride 1, padding 0, dilation 1, groups 1, and
 * zero stride/dilation/groups fields also mean 1, so
 * &(tg_conv2d_opts){.padding = {2, 2}} works. */
tg_module *tg_nn_conv2d(int64_t in_channels, int64_t out_channels, int kh,
                        int kw, const tg_conv2d_opts *opts, bool bias,
                        tg_generator *g);
/* opts are required (the kernel size); stride {0, 0} means the kernel */
tg_module *tg_nn_max_pool2d(const tg_pool2d_opts *opts);
tg_module *tg_nn_avg_pool2d(const tg_pool2d_opts *opts);

/* momentum for the cumulative moving average (PyTorch's momentum=None) */
#define TG_NN_MOMENTUM_CUMULATIVE (-1.0)
/* input [N, C, H, W] with C == num_features. affine: parameters weight
 * (ones) and bias (zeros). track_running_stats: buffers running_mean
 * (zeros), running_var (ones) and num_batches_tracked (int64 0), updated
 * in training and used in eval; without them batch statistics are used
 * in both modes. PyTorch's defaults: eps 1e-5, momentum 0.1. */
tg_module *tg_nn_batch_norm2d(int64_t num_features, double eps,
                              double momentum, bool affine,
                              bool track_running_stats);
/* zeroes elements with probability p in training (scaling the others by
 * 1 / (1 - p)); the identity in eval. g is borrowed: it is drawn from at
 * every training forward (in a graph: at every run) and must outlive the
 * module. */
tg_module *tg_nn_dropout(double p, tg_generator *g);

tg_module *tg_nn_relu(void);
tg_module *tg_nn_tanh(void);
tg_module *tg_nn_sigmoid(void);
tg_module *tg_nn_gelu(void); /* exact (erf) form */
tg_module *tg_nn_leaky_relu(double negative_slope); /* PyTorch: 0.01 */
tg_module *tg_nn_identity(void);
/* flattens axes start..end (PyTorch's nn.Flatten default: 1, -1) */
tg_module *tg_nn_flatten(int start_axis, int end_axis);

/* ---- containers --------------------------------------------------------------
 * A Sequential runs its children in order. tg_nn_sequential takes the n
 * children (named "0", "1", ...); every child belongs to the container
 * (all are freed when one is NULL). Named children: start from
 * tg_nn_sequential(0, NULL) and tg_module_add them. */
tg_module *tg_nn_sequential(int n, tg_module *const *children);
/* adds child under the next index ("0", "1", ... counting all children) */
tg_status tg_nn_sequential_append(tg_module *seq, tg_module *child);

/* LeNet-5 for 1x28x28 inputs, logits [N, 10]: a Sequential of conv1 (6@5x5,
 * padding 2), relu1, pool1 (max 2x2), conv2 (16@5x5), relu2, pool2,
 * flatten, fc1 (400 -> 120), relu3, fc2 (120 -> 84), relu4, fc3 (84 -> 10).
 * 61706 parameters, named conv1.weight ... fc3.bias as in PyTorch. */
tg_module *tg_lenet5(tg_generator *g);

/* ---- custom modules ------------------------------------------------------------
 * A module of a user-defined kind. forward runs inside a scope of its own
 * (intermediates are freed; the returned tensor is kept); it returns a
 * new reference (an op's result, or tg_retain(x) to pass x through). It
 * reads the module's tensors with tg_module_tensor and runs children with
 * tg_module_forward. user is handed back by tg_module_user and released
 * with user_free (may be NULL) when the module is freed. */
tg_module *tg_module_new(const char *kind, tg_module_forward_fn forward,
                         void *user, void (*user_free)(void *));
void *tg_module_user(const tg_module *m);
/* Names are non-empty, contain no '.', and are unique among a module's
 * parameters, buffers and children ("duplicate name" error otherwise).
 * A parameter or buffer is retained (the caller keeps its own reference);
 * a parameter must be floating point and is made to require grad. */
tg_status tg_module_add_parameter(tg_module *m, const char *name,
                                  tg_tensor *t);
tg_status tg_module_add_buffer(tg_module *m, const char *name, tg_tensor *t);
/* takes ownership of child (see above) */
tg_status tg_module_add(tg_module *m, const char *name, tg_module *child);

/* ---- inspection ----------------------------------------------------------------- */
const char *tg_module_kind(const tg_module *m); /* "Linear", "Sequential" ... */
int tg_module_num_children(const tg_module *m);
tg_module *tg_module_child_at(const tg_module *m, int i); /* borrowed */
const char *tg_module_child_name(const tg_module *m, int i);
/* by dotted path ("features.0"), or NULL with an error naming the path */
tg_module *tg_module_child(const tg_module *m, const char *path);
/* a parameter or buffer by full name ("conv1.weight", "bn.running_mean"),
 * borrowed, or NULL with an error */
tg_tensor *tg_module_tensor(const tg_module *m, const char *name);
/* total number of parameter elements (61706 for LeNet-5) */
int64_t tg_module_num_parameters(const tg_module *m);
/* PyTorch-style description, one child per line; malloc'd, caller frees */
char *tg_module_to_string(const tg_module *m);

/* ---- named tensors: parameters and state -----------------------------------------
 * Lists in PyTorch's order: a module's own parameters (then, for the
 * state, its buffers) in registration order, then each child's, recursively,
 * with names joined by '.' ("0.weight", "conv1.bias", "bn.running_var").
 * The order is stable: it depends only on how the module was built. A
 * tensor registered twice (tied weights) is listed once among the
 * parameters (as PyTorch does) but under each name in the state. Both
 * return the count (or -1 with an error) and set *out to an array that
 * the caller releases with tg_named_tensors_free; names live in it,
 * tensors are borrowed from the module, and an entry with a NULL name
 * follows the last one. */
typedef struct tg_named_tensor {
    const char *name;
    tg_tensor *tensor;
    bool is_buffer;
} tg_named_tensor;
int tg_module_parameters(const tg_module *m, tg_named_tensor **out);
int tg_module_state(const tg_module *m, tg_named_tensor **out); /* + buffers */
void tg_named_tensors_free(tg_named_tensor *list);
/* copies values into the module's parameters/buffers by name (shapes must
 * match; dtypes are converted). strict: every state entry must be given
 * and every given name must exist. Runs without recording gradients. */
tg_status tg_module_load_state(tg_module *m, int n,
                               const tg_named_tensor *state, bool strict);

/* Checkpoints (tg/io.h): adds the state to sd as prefix + name (prefix
 * NULL or "" for PyTorch's plain names; "model." to share a file with an
 * optimizer's "optim." entries). The tensors are shared, not copied. */
tg_status tg_module_state_dict(const tg_module *m, tg_state_dict *sd,
                               const char *prefix);
/* loads the entries of sd whose names start with prefix (all when NULL or
 * ""), with the prefix removed, as tg_module_load_state does. With
 * safetensors: tg_module_load_state_dict(m, tg_safetensors_load(path)...) */
tg_status tg_module_load_state_dict(tg_module *m, const tg_state_dict *sd,
                                    const char *prefix, bool strict);

/* ---- modes and bulk updates --------------------------------------------------------- */
/* sets training (true) or eval (false) mode on m and all its children */
void tg_module_train(tg_module *m, bool training);
bool tg_module_is_training(const tg_module *m);
/* drops the gradients of all parameters (PyTorch's zero_grad) */
void tg_module_zero_grad(tg_module *m);
/* sets requires_grad on every parameter (freezing a part of a model) */
tg_status tg_module_requires_grad(tg_module *m, bool requires_grad);
/* converts every floating-point parameter and buffer to dt (float32 or
 * float64), like PyTorch's .double(); the tensors are replaced, so do it
 * before handing parameters to an optimizer */
tg_status tg_module_to_dtype(tg_module *m, tg_dtype dt);

#pragma GCC visibility pop

#ifdef __cplusplus
}
#endif
#endif
