#!/usr/bin/env node
// The `trellis` command (package.json "bin"): runs the compiled CLI.
require('../dist/cli/trellis.js');
