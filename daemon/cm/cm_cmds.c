/* SPDX-License-Identifier: MIT */
/* Connection-management commands (common/proto_cm.h). */
#include "daemon/core.h"

const struct cmd_family cm_cmd_family = {
	.base = SRD_CMD_CM_BASE,
	.count = 0,
	.cmds = NULL,
};
