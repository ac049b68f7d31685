import re, sys
s = open(sys.argv[1]).read()
# kernel<template args> (possibly on the line before) <<<cfg>>>(args)
s, n = re.subn(r'(\w+(?:<[^<>]*>)?)\s*<<<(.*?)>>>', r'(emu_cfg(\2), \1)', s, flags=re.S)
sys.stderr.write('%d launches rewritten\n' % n)
open(sys.argv[2], 'w').write(s)
