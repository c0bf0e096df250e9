/* SPDX-License-Identifier: MIT */
/*
 * softrdma(8): the administration tool, in the manner of iproute2's
 * rdma(8).  Shared between its files: options, the daemon connection,
 * output (text or JSON) and the names of things.
 */
#ifndef SOFTRDMA_TOOLS_SOFTRDMA_H
#define SOFTRDMA_TOOLS_SOFTRDMA_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/proto_admin.h"

/* Exit codes. */
enum {
	EXIT_OK = 0,
	EXIT_FAILED = 1, /* the command could not be done */
	EXIT_USAGE = 2,	 /* bad command line */
};

struct opts {
	bool json;
	bool pretty;
	bool details;
	bool no_start;
	const char *socket; /* NULL: $SOFTRDMA_SOCKET, else the default */
};
extern struct opts opt;

/* --- conn.c: the daemon ----------------------------------------------------- */
/* Connect (starting softrdmad when nobody answers, unless --no-start) and
 * say HELLO.  0, or prints why and returns -errno. */
int conn_open(void);
void conn_close(void);
/*
 * One admin request.  rep receives up to rep_size bytes of the reply's
 * payload; *got is how many came (an error reply too may carry one: a
 * reason).  Returns the reply's status (0 or a negative errno) or a
 * transport error.
 */
int conn_cmd(uint32_t op, const void *req, size_t req_len, void *rep,
	     size_t rep_size, size_t *got);
/* The socket name in use, for messages. */
const char *conn_socket_name(void);

/* --- devices.c: the daemon's device list ---------------------------------- */
struct dev_list {
	struct srd_admin_dev_info *dev;
	unsigned int n;
};
/* Fetch every device (removed ones too).  0 or -errno (printed). */
int devs_fetch(struct dev_list *l);
void devs_free(struct dev_list *l);
/* A device by name (a live one before a removed one), or NULL. */
const struct srd_admin_dev_info *devs_find(const struct dev_list *l,
					   const char *name);
/* A device's name by index, "?" if unknown. */
const char *devs_name(const struct dev_list *l, uint32_t index);
/*
 * "DEV" or "DEV/PORT" on the command line: the device and the port (1,
 * the only one).  Prints the error and returns -1 when there is none.
 */
int devs_parse(const struct dev_list *l, const char *arg,
	       const struct srd_admin_dev_info **out);
/*
 * For `show` commands: fetch the devices and call fn for the one named by
 * arg ("DEV" or "DEV/PORT"), or for every live one if arg is NULL (removed
 * ones too with -d), inside one output listing.  fn returns 0 or -errno,
 * which stops the listing and is reported as a failure of what.  Returns
 * the exit code.
 */
typedef int (*devs_show_fn)(const struct dev_list *l,
			    const struct srd_admin_dev_info *di);
int devs_show_each(const char *arg, devs_show_fn fn, const char *what);

/* --- out.c: text or JSON ---------------------------------------------------- */
/*
 * Each record is an object: in text mode a line of "key value" words, in
 * JSON mode an object of the top-level array.  tfmt is the text form of a
 * field (NULL: not shown as text), jkey its JSON name (NULL: text only).
 */
void out_begin(void); /* the top-level array */
void out_end(void);
void out_obj_open(void);
void out_obj_close(void);
/* A nested array of objects under jkey (text: one indented line each). */
void out_list_open(const char *jkey);
void out_list_close(void);
void out_str(const char *jkey, const char *tfmt, const char *v);
void out_uint(const char *jkey, const char *tfmt, uint64_t v);
/* A number shown as 0x... text and a "0x..." JSON string. */
void out_hex(const char *jkey, const char *tfmt, uint64_t v);
void out_bool(const char *jkey, const char *tfmt, bool v);
/* Text only (line breaks, indentation). */
void out_text(const char *s);
/* The owner of an object: "pid N comm NAME". */
void out_owner(uint32_t pid);

/* --- names.c ------------------------------------------------------------------ */
const char *port_state_name(uint32_t state);
const char *phys_state_name(uint32_t state);
const char *qp_type_name(uint32_t type);
const char *qp_state_name(uint32_t state);
const char *cm_state_name(uint32_t state);
const char *cm_ps_name(uint32_t ps);
/* enum ibv_mtu to bytes, 0 if invalid. */
uint32_t mtu_bytes(uint32_t mtu);
/* "xxxx:xxxx:xxxx:xxxx" of a big-endian GUID. */
void guid_str(uint64_t be_guid, char *buf, size_t size);
void gid_str(const uint8_t raw[16], char *buf, size_t size);
void sockaddr_str(const struct srd_admin_sockaddr *a, char *buf, size_t size);
/* Is arg a non-empty prefix of word (as iproute2 abbreviates)? */
bool matches(const char *arg, const char *word);
/* Parse a decimal or 0x number into *out; false if it is not one. */
bool parse_u32(const char *s, uint32_t *out);

/* --- the objects -------------------------------------------------------------- */
int cmd_link(int argc, char **argv);
int cmd_dev(int argc, char **argv);
int cmd_resource(int argc, char **argv);
int cmd_statistic(int argc, char **argv);
int cmd_fault(int argc, char **argv);
int cmd_capture(int argc, char **argv);
/* A usage error: prints "softrdma: msg" and a hint, returns EXIT_USAGE. */
int usage_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* A failure: prints "softrdma: msg", returns EXIT_FAILED. */
int fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* A daemon error for op: prints a message fitting err, returns
 * EXIT_FAILED. */
int fail_errno(int err, const char *what);

#endif
