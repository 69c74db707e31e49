# Builds fleetsim's example scheduling plugins out of tree (docs/plugins.md).
# Installed as PREFIX/share/fleetsim/examples/plugins/Makefile; from any directory:
#   make -f PREFIX/share/fleetsim/examples/plugins/Makefile
# writes plugin_fifo.so (ABI 1), plugin_srtf.so (ABI 2) and plugin_speed.so
# (ABI 3) in the current directory.  A plugin needs the header only (no
# -lfleetsim): the installed one of this prefix, or FLEETSIM_CFLAGS (e.g.
# FLEETSIM_CFLAGS="$(pkg-config --cflags fleetsim)").
EXAMPLES := $(dir $(abspath $(lastword $(MAKEFILE_LIST))))
PREFIX := $(abspath $(EXAMPLES)/../../../..)
FLEETSIM_CFLAGS ?= -I$(PREFIX)/include
CC ?= cc
CFLAGS ?= -std=c17 -O2 -Wall -Wextra
PLUGINS := plugin_fifo.so plugin_srtf.so plugin_speed.so

all: $(PLUGINS)

%.so: $(EXAMPLES)%.c
	$(CC) $(CFLAGS) -fPIC -shared $(FLEETSIM_CFLAGS) $< -o $@

clean:
	rm -f $(PLUGINS)

.PHONY: all clean
