/* The tg subcommands: each takes argv from its own name on and returns
 * the process exit status. */
#ifndef TG_TOOL_COMMANDS_H
#define TG_TOOL_COMMANDS_H

typedef struct tg_command {
    const char *name;
    const char *help;
    int (*run)(int argc, char **argv);
} tg_command;

int tg_cmd_bench(int argc, char **argv);
int tg_bench_onnx(int argc, char **argv); /* bench_onnx.c: tg bench onnx */
int tg_cmd_data(int argc, char **argv);
int tg_cmd_eval(int argc, char **argv);
int tg_cmd_graph(int argc, char **argv);
int tg_cmd_inspect(int argc, char **argv);
int tg_cmd_run(int argc, char **argv);
int tg_cmd_train(int argc, char **argv);
int tg_cmd_version(int argc, char **argv);

#endif
