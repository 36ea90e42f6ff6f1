/* SPDX-License-Identifier: MIT */
/* UDP datagrams and binds for the network tests: send, count what arrives, try a bind. */
#pragma once

#include <stdint.h>

#define PAYLOAD 100 /* bytes of each datagram */

/* Send PAYLOAD bytes from fd to addr:port (IPv4 or IPv6); 0 or -errno. */
int send_to(int fd, const char *addr, uint16_t port);
/* The number of datagrams fd receives within ms milliseconds of nothing more arriving. */
int received(int fd, int ms);
/* bind() of a new socket of family, type, port on loopback: 0 or -errno. */
int try_bind(int family, int type, uint16_t port);
