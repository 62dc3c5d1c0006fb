# SPDX-License-Identifier: MIT
# `make install` / `make uninstall` (PREFIX, DESTDIR and the directory
# variables below, GNU style) and `make deb` (debian/, dpkg-buildpackage).
#   make install                      /usr/local, the unit in /usr/local/lib/systemd/system
#   make install PREFIX=/usr DESTDIR=/tmp/stage
#   make uninstall                    removes exactly what install put there
# The policy file $(SYSCONFDIR)/leap/leap.conf is installed only when absent
# (an edited one survives reinstalls and upgrades; the shipped default is
# always in $(DOCDIR)/leap.conf.example), and uninstall removes it only if
# it is still the shipped default.  Man pages are generated from the
# programs' own --help by help2man (dist/gen-man.sh).
PREFIX ?= /usr/local
BINDIR ?= $(PREFIX)/bin
DATADIR ?= $(PREFIX)/share
MANDIR ?= $(DATADIR)/man
DOCDIR ?= $(DATADIR)/doc/leap
BASHCOMPDIR ?= $(DATADIR)/bash-completion/completions
UNITDIR ?= $(PREFIX)/lib/systemd/system
SYSCONFDIR ?= /etc
INSTALL ?= install

# What people run: the agent, the backend's daemons and tool, the event
# printer, the simulator and its trace generator, and the self-checking
# workload to try it with.  (leap-bench-engine and leap-regsim are
# development benchmarks; they stay in bin/.)
INSTALL_PROGS := leap-agent leap-memd leap-swapd leap-memctl leap-observe leap-sim \
	leap-tracegen leap-workload
MAN_PAGES := leap-agent leap-memd leap-swapd leap-memctl
MAN_OUT := $(patsubst %,$(OUTPUT)/man/%.8,$(MAN_PAGES))

$(OUTPUT)/man/%.8: $(BIN)/% dist/man/%.h2m dist/gen-man.sh
	@mkdir -p $(@D)
	bash dist/gen-man.sh $(BIN)/$* dist/man/$*.h2m $@

.PHONY: man install uninstall deb
man: $(MAN_OUT)

# Every file install writes except leap.conf (which has its own rule).
INSTALLED_FILES = $(addprefix $(BINDIR)/,$(INSTALL_PROGS)) \
	$(UNITDIR)/leap-agent.service \
	$(patsubst %,$(MANDIR)/man8/%.8,$(MAN_PAGES)) \
	$(addprefix $(BASHCOMPDIR)/,$(INSTALL_PROGS)) \
	$(DOCDIR)/README.md $(DOCDIR)/leap.conf.example
CONF := $(SYSCONFDIR)/leap/leap.conf

install: $(addprefix $(BIN)/,$(INSTALL_PROGS)) $(MAN_OUT)
	$(INSTALL) -d $(DESTDIR)$(BINDIR) $(DESTDIR)$(UNITDIR) $(DESTDIR)$(MANDIR)/man8 \
		$(DESTDIR)$(BASHCOMPDIR) $(DESTDIR)$(DOCDIR) $(DESTDIR)$(SYSCONFDIR)/leap
	$(INSTALL) -m 755 $(addprefix $(BIN)/,$(INSTALL_PROGS)) $(DESTDIR)$(BINDIR)/
	sed -e 's|@BINDIR@|$(BINDIR)|g' -e 's|@SYSCONFDIR@|$(SYSCONFDIR)|g' \
		-e 's|@DOCDIR@|$(DOCDIR)|g' tools/leap-agent.service >$(DESTDIR)$(UNITDIR)/leap-agent.service
	chmod 644 $(DESTDIR)$(UNITDIR)/leap-agent.service
	$(INSTALL) -m 644 $(MAN_OUT) $(DESTDIR)$(MANDIR)/man8/
	for p in $(INSTALL_PROGS); do \
		$(INSTALL) -m 644 dist/leap.bash-completion $(DESTDIR)$(BASHCOMPDIR)/$$p || exit 1; \
	done
	$(INSTALL) -m 644 README.md $(DESTDIR)$(DOCDIR)/README.md
	$(INSTALL) -m 644 dist/leap.conf $(DESTDIR)$(DOCDIR)/leap.conf.example
	@if [ -e $(DESTDIR)$(CONF) ]; then \
		echo "install: keeping $(DESTDIR)$(CONF) (the shipped default is $(DOCDIR)/leap.conf.example)"; \
	else \
		echo "$(INSTALL) -m 644 dist/leap.conf $(DESTDIR)$(CONF)"; \
		$(INSTALL) -m 644 dist/leap.conf $(DESTDIR)$(CONF); \
	fi

uninstall:
	rm -f $(addprefix $(DESTDIR),$(INSTALLED_FILES))
	@if [ -e $(DESTDIR)$(CONF) ] && ! cmp -s dist/leap.conf $(DESTDIR)$(CONF); then \
		echo "uninstall: keeping $(DESTDIR)$(CONF): it differs from the shipped default"; \
	else \
		echo "rm -f $(DESTDIR)$(CONF)"; rm -f $(DESTDIR)$(CONF); \
	fi
	-rmdir $(DESTDIR)$(SYSCONFDIR)/leap $(DESTDIR)$(DOCDIR) 2>/dev/null

# `make deb`: a binary Debian package built by dpkg-buildpackage from
# debian/ (debhelper; the unit is enabled and started by dh_installsystemd's
# maintainer scripts) in a copy of the source tree under $(OUTPUT)/deb, so
# the build is clean and nothing is written outside this checkout.  The
# packaging tools (debhelper) are installed by install-deps.sh --packaging,
# only here.  The .deb lands in $(OUTPUT)/deb/.
DEB_DIR := $(OUTPUT)/deb
deb:
	bash tools/install-deps.sh --packaging
	rm -rf $(DEB_DIR) && mkdir -p $(DEB_DIR)/src
	git ls-files -z --cached --others --exclude-standard | \
		xargs -0 sh -c 'for f; do [ -e "$$f" ] && printf "%s\0" "$$f"; done' sh | \
		tar --null -T - -cf - | tar -xf - -C $(DEB_DIR)/src
	cd $(DEB_DIR)/src && dpkg-buildpackage -b -us -uc
	@ls $(DEB_DIR)/*.deb
