/* SPDX-License-Identifier: MIT */
/*
 * A USDT probe site, as <sys/sdt.h> makes one (which a build machine need
 * not have): a function NAME that starts with a nop, the probe site, and
 * returns, described by a "stapsdt" note in .note.stapsdt naming SEMAPHORE
 * (a volatile unsigned short in a writable section). Needs an assembler for
 * x86-64 or aarch64 (both have "nop" and "ret").
 */
#pragma once

#define USDT_SITE_STR(x) #x
#define USDT_SITE_FUNCTION(name, semaphore)                                                        \
	__asm__(".pushsection .text\n"                                                             \
		".globl " USDT_SITE_STR(                                                           \
			name) "\n"                                                                 \
			      ".type " USDT_SITE_STR(name) ", @function\n" USDT_SITE_STR(          \
				      name) ":\n"                                                  \
					    "990: nop\n"                                           \
					    "ret\n"                                                \
					    ".size " USDT_SITE_STR(name) ", . - " USDT_SITE_STR(   \
						    name) "\n"                                     \
							  ".popsection\n"                          \
							  ".pushsection .note.stapsdt, \"\", "     \
							  "\"note\"\n"                             \
							  ".balign 4\n"                            \
							  ".4byte 992f - 991f, 994f - 993f, 3\n"   \
							  "991: .asciz \"stapsdt\"\n"              \
							  "992: .balign 4\n"                       \
							  "993: .8byte 990b\n"                     \
							  ".8byte _.stapsdt.base\n"                \
							  ".8byte " USDT_SITE_STR(                 \
								  semaphore) "\n"                  \
									     ".asciz "             \
									     "\"bpfbroker_"        \
									     "test\"\n"            \
									     ".asciz "             \
									     "\"" USDT_SITE_STR(   \
										     name) "\"\n"  \
											   ".asci" \
											   "z "    \
											   "\"\""  \
											   "\n"    \
											   "994: " \
											   ".bali" \
											   "gn "   \
											   "4\n"   \
											   ".pops" \
											   "ectio" \
											   "n\n"   \
											   ".push" \
											   "secti" \
											   "on "   \
											   ".stap" \
											   "sdt."  \
											   "base," \
											   " \"aG" \
											   "\", "  \
											   "@prog" \
											   "bits," \
											   " ."    \
											   "staps" \
											   "dt."   \
											   "base," \
											   " comd" \
											   "at\n"  \
											   ".weak" \
											   " _."   \
											   "staps" \
											   "dt."   \
											   "base"  \
											   "\n"    \
											   ".hidd" \
											   "en "   \
											   "_."    \
											   "staps" \
											   "dt."   \
											   "base"  \
											   "\n"    \
											   "_."    \
											   "staps" \
											   "dt."   \
											   "base:" \
											   " ."    \
											   "space" \
											   " 1\n"  \
											   ".size" \
											   " _."   \
											   "staps" \
											   "dt."   \
											   "base," \
											   " 1\n"  \
											   ".pops" \
											   "ectio" \
											   "n\n");
