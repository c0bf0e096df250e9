/* SPDX-License-Identifier: MIT */
/* ibv_rc_pingpong: SEND ping-pong over a RC QP (see conn_pingpong.c). */
#include "pingpong_common.h"

int main(int argc, char *argv[])
{
	return pp_conn_main(argc, argv, IBV_QPT_RC);
}
