/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * learn: `sandlock learn`, the profile a command needs, from what an observing sandbox saw.
 * learn.c runs the command and records; learn-paths.c turns the paths seen into grants (pure
 * but for lstat: the unit tests link it); learn-profile.c writes the profile.
 */
#pragma once

#include <stddef.h>
#include <stdint.h>

/* A set of strings, copied in; iterate with learn_set_sorted(). */
struct learn_set {
	char **slots;
	size_t cap, n;
};

/* 1 added, 0 already there, -ENOMEM. */
int learn_set_add(struct learn_set *s, const char *str);
int learn_set_has(const struct learn_set *s, const char *str);
/* The strings, sorted, in a NULL-terminated vector of borrowed pointers (free() the vector
 * only); NULL when out of memory. */
const char **learn_set_sorted(const struct learn_set *s);
void learn_set_free(struct learn_set *s);

/* What a path may become as a grant. */
enum learn_class {
	LEARN_PLAIN, /* granted as seen */
	LEARN_WARN,  /* /etc, /proc, /sys, /dev, $HOME: granted whole only with a warning */
	LEARN_NEVER, /* /, ~/.ssh, ~/.aws, ~/.gnupg, ~/.kube (and beneath), a directory above
		      * $HOME: never granted */
};

/* @home: the user's home ($HOME), or NULL. */
enum learn_class learn_path_class(const char *home, const char *path);

/* What was asked of a path. */
enum learn_access {
	LEARN_READ,  /* an open for reading, a listing, an exec */
	LEARN_WRITE, /* an open for writing or truncate of an existing file */
	LEARN_ENTRY, /* a change of a directory's entries: create, remove, rename, link */
};

/* What an event's access ("O_RDONLY", "O_WRONLY|O_CREAT", "exec", "mkdir", ...) asked of its
 * path: an enum learn_access, or -1 for what needs no grant (stat, readlink, O_PATH, ...). */
int learn_access_of(const char *access);

/* A path seen (absolute, resolved) and what was asked of it, with the grants it needs. */
struct learn_paths {
	const char *home;	/* borrowed; NULL: none */
	const char *skip_under; /* borrowed: the store root (the private TMPDIR, branches); NULL */
	struct learn_set read, write;
	struct learn_set refused; /* "PATH\tWHY" of the paths never granted */
	struct learn_set warned;  /* LEARN_WARN grants made whole, for the warnings */
};

/* Record @path asked @access. Reads of missing paths need no grant and are left out; a path
 * under /proc/PID (or self) needs /proc whole. -ENOMEM. */
int learn_paths_add(struct learn_paths *lp, const char *path, enum learn_access access);
/* Collapse the grants: those beneath another dropped, siblings merged into their parent when
 * there are @merge_min or more (never into a LEARN_WARN or LEARN_NEVER directory), reads
 * beneath a write dropped. -ENOMEM. */
int learn_paths_collapse(struct learn_paths *lp, size_t merge_min);
void learn_paths_free(struct learn_paths *lp);

/* @path (absolute) the nearest existing directory holding it, or itself when it is an existing
 * directory. Returns a new string, NULL when out of memory. */
char *learn_existing_dir(const char *path);
/* 1 when @path is @dir or beneath it (both absolute, without trailing slashes but "/"). */
int learn_beneath(const char *path, const char *dir);
/* @path as a profile writes it: "${HOME}/rest" under @home, else itself. New string or NULL. */
char *learn_home_form(const char *home, const char *path);

/* What one observed run of the command showed. */
struct learn_run {
	const char *const *argv; /* the command */
	const char *home;	 /* $HOME resolved (the events' paths are), NULL: none usable */
	const char *home_env;	 /* $HOME as the profile loader expands ${HOME} */
	struct learn_paths paths;
	struct learn_set net;	/* "tcp://HOST:PORT", "udp://HOST:PORT" */
	struct learn_set binds; /* TCP ports bound ("8080", "0") */
	struct learn_set execs; /* the executables run */
	uint64_t peak_memory;	/* bytes, as max_memory counts them; 0: not seen */
	uint64_t peak_processes, peak_files;
};

/* Write the profile of @lr to @out_file (atomically), or to stdout when NULL; with @merge_file,
 * on top of that profile. Errors are printed; returns 0 or an exit code. */
int learn_profile_write(const struct learn_run *lr, const char *merge_file, const char *out_file);
