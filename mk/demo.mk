# SPDX-License-Identifier: MIT
# The main job on an embedded default (README): sudo make demo
demo: all
	bash tools/demo.sh
