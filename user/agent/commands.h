/* SPDX-License-Identifier: MIT */
/*
 * leap-agent's subcommands, one file each (the table of contents; the
 * command table that dispatches them is in user/leap-agent.c).  Each
 * takes argv[0] as "leap-agent NAME" and returns the process exit status.
 */
#ifndef LEAP_AGENT_COMMANDS_H
#define LEAP_AGENT_COMMANDS_H

int do_attach(int argc, char **argv); /* attach.c */
int do_replay(int argc, char **argv); /* replay.c */
int do_run(int argc, char **argv);    /* run.c */
int do_stats(int argc, char **argv);  /* stats.c */
int do_status(int argc, char **argv); /* status.c */

#endif
