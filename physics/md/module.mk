# physics/md: the pair kernels use `#pragma omp simd reduction(...)` so the compiler may vectorise
# the force sums over neighbours (a fixed lane-wise order: still deterministic). -fopenmp-simd
# enables only those pragmas: no OpenMP runtime, no threads.
$(BUILD)/physics/md/md_lj.o $(BUILD)/physics/md/md_neigh.o: CFLAGS += -fopenmp-simd
