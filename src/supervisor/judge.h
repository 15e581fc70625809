/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * judge: the kernel's own denials, made visible in logging mode (SANDLOCK_EVENTS_DENIALS).
 *
 * A path call the supervisor answered CONTINUE (routes.def traps the calls Landlock may refuse
 * in logging mode) is judged once more against the ruleset as the kernel got it (plan.fs.ll):
 * the name read and resolved as the child would, the access the call needs from its syscall
 * and flags, and Landlock's rule, "some rule on the object or one of its ancestors grants
 * each access asked". A refusal is emitted as a denial (judged), and with
 * SANDLOCK_EVENTS_ALLOWED what passes is emitted as allowed (what `sandlock learn` reads).
 * The kernel still decides: the judgement is a diagnosis made before the kernel looks, on a
 * name that may change meanwhile, never an answer. It never changes the answer, never fails
 * the call (an error in judging: no event) and stays short on the loop (one name read, an
 * O_PATH resolution or two, the walk up to the root and the table).
 *
 * A refusal of handlers/fs-write.c (EACCES for a denied path beneath a writable grant) is told
 * with the fs_denied entry it protects, one of handlers/fs-meta.c (a metadata change outside
 * the writable grants) with the grant it needs. The syscalls the filter denies whole
 * (plan.blocked), and the calls its argument rules refuse (plan.arg_denied, judge-args.c), are
 * answered here in logging mode, with the errno the filter would have given, and logged.
 */
#pragma once

#include <limits.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <linux/seccomp.h>

#include "plan/plan.h"

struct supervisor;

/* A syscall the filter denies whole (plan.blocked): answered in @resp with its errno and
 * logged, NOTIF_ANSWERED; NOTIF_NOT_MINE for any other syscall (dispatch's). */
int judge_blocked(struct supervisor *sv, const struct seccomp_notif *req,
		  struct seccomp_notif_resp *resp);
/* judge-args.c: a call the filter's argument rules refuse (plan.arg_denied, logging mode):
 * answered in @resp with the rule's errno and logged, NOTIF_ANSWERED; else NOTIF_NOT_MINE. */
int judge_arg_denied(struct supervisor *sv, const struct seccomp_notif *req,
		     struct seccomp_notif_resp *resp);
/* Whether judge_arg_denied refuses @req. */
int judge_arg_denies(const struct supervisor *sv, const struct seccomp_notif *req);
/* What is left of an open's judgement once its answer is sent: the name and the descriptor it
 * starts from (child_path_base), taken while the notification was valid. base -1: nothing. */
struct judge_later {
	int base;
	int abs, self, follow;
	uint64_t flags, resolve;
	char path[PATH_MAX];
};

/* The path call @req, answered in @resp, judged for the log: a CONTINUE against the ruleset
 * (what the kernel will decide), an EACCES of the supervisor's beneath a writable grant holding
 * a denied path (handlers/fs-write.c) for the fs_denied entry it protects, or of a metadata
 * change (handlers/fs-meta.c) for the write grant it needs. Nothing when the run
 * does not log, the call is none Landlock checks, or anything fails. */
void judge_answer(struct supervisor *sv, const struct seccomp_notif *req,
		  const struct seccomp_notif_resp *resp, struct judge_later *later);
/* The rest of an open's judgement (judge_answer left it in @later), made once the answer is
 * sent: the name resolved from its start and judged as the kernel did meanwhile (a diagnosis,
 * as the rest). Closes later->base. */
void judge_after(struct supervisor *sv, const struct seccomp_notif *req, struct judge_later *later);

/* What the judgements keep (a cache of directories' chains): made by supervisor_prepare in
 * logging mode (0, -ENOMEM), freed by supervisor_done. */
int judge_cache_new(struct supervisor *sv);
void judge_cache_free(struct supervisor *sv);

/* ---- the pure parts (exposed for tests/unit/test-judge.c) ------------------------------- */

/* The Landlock access an open with @flags needs on a file (@is_dir 0) or directory that
 * exists (@exists), or on the parent of one it creates: 0 when Landlock checks nothing
 * (O_PATH, an open the kernel refuses first). */
uint64_t judge_open_access(uint64_t flags, int is_dir, int exists);
/* The MAKE_* right a create of type @mode (S_IF*; 0: a regular file) needs on its parent. */
uint64_t judge_make_access(mode_t mode);
/* The REMOVE_* right removing an entry of type @mode needs on its parent. */
uint64_t judge_remove_access(mode_t mode);
/* The bits of @access no rule of @ll on any of @chain (the object or its parent first, then
 * each directory above, to the root) grants: Landlock's union over the hierarchy. Bits the
 * ruleset does not handle are never missing, but REFER, which Landlock always denies. */
uint64_t judge_missing(const struct plan_ll *ll, const struct file_id *chain, size_t n,
		       uint64_t access);
/* The reason and hint of a denial of @missing on the object @real, whose grant would be on
 * @dir: the fs_denied entry @real lies beneath (as the user wrote it), else the read or the
 * write grant missing. Written into @reason and @hint (truncated to their sizes). */
void judge_texts(const struct plan_ll *ll, const char *real, const char *dir, uint64_t missing,
		 char *reason, size_t reason_size, char *hint, size_t hint_size);
/* The open flags as text, "O_RDONLY", "O_WRONLY|O_CREAT|O_TRUNC". */
void judge_open_text(uint64_t flags, char *buf, size_t size);
