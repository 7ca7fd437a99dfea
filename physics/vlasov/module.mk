# physics/vlasov: regenerate the DG kernels (needs /usr/bin/python3 with sympy). The generated
# files in physics/vlasov/kernels/ are committed, so a normal build does not need sympy.
VLASOV_GEN_PY ?= /usr/bin/python3
kernels: vlasov-kernels
.PHONY: vlasov-kernels
vlasov-kernels:
	@$(VLASOV_GEN_PY) -c 'import sympy' 2>/dev/null || { echo "make kernels: needs sympy (Debian python3-sympy): run ./configure --with-bench"; exit 2; }
	$(VLASOV_GEN_PY) physics/vlasov/gen/gen_kernels.py physics/vlasov/kernels
