/* SPDX-License-Identifier: MIT */
/* Administration commands (common/proto_admin.h). */
#include "daemon/core.h"

const struct cmd_family admin_cmd_family = {
	.base = SRD_CMD_ADMIN_BASE,
	.count = 0,
	.cmds = NULL,
};
