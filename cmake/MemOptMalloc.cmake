#===- MemOptMalloc.cmake - the allocator memopt's tools link -----*- cmake -*-===//
#
# Compiling a 100,000-op training step allocates and frees millions of small
# objects (ops, operands, attribute storage, the scheduler's and planner's
# tables); under glibc's malloc a fifth of memopt-opt's time went to
# malloc_consolidate, chunk unlinking and page faults. The executables
# memopt-opt, memopt-run and memopt-translate link mimalloc, which replaces
# malloc and free for the whole process (docs/benchmarks.md, "Compile
# time"). The libraries do not: a compiler that embeds memopt's passes keeps
# its own allocator.
#
# MEMOPT_MALLOC picks: `auto` (mimalloc when its CMake package is found,
# else glibc's, said at configure time), `mimalloc` (required) or `system`.
# A MEMOPT_STATIC_LLVM build (portable binaries) keeps glibc's under `auto`:
# Debian ships mimalloc as a shared library only.
#
#===----------------------------------------------------------------------===//

set(MEMOPT_MALLOC "auto" CACHE STRING
    "Allocator linked into memopt's executables: auto, mimalloc or system")
set_property(CACHE MEMOPT_MALLOC PROPERTY STRINGS auto mimalloc system)

set(MEMOPT_USES_MIMALLOC OFF)
if(MEMOPT_MALLOC STREQUAL "mimalloc")
  find_package(mimalloc 2.0 CONFIG REQUIRED)
  set(MEMOPT_USES_MIMALLOC ON)
elseif(MEMOPT_MALLOC STREQUAL "auto")
  if(NOT MEMOPT_STATIC_LLVM)
    find_package(mimalloc 2.0 CONFIG QUIET)
    if(mimalloc_FOUND)
      set(MEMOPT_USES_MIMALLOC ON)
    endif()
  endif()
elseif(NOT MEMOPT_MALLOC STREQUAL "system")
  message(FATAL_ERROR "MEMOPT_MALLOC is '${MEMOPT_MALLOC}'; expected auto, "
                      "mimalloc or system")
endif()
if(MEMOPT_USES_MIMALLOC)
  message(STATUS "memopt's executables link mimalloc ${mimalloc_VERSION}")
else()
  message(STATUS "memopt's executables use the system's malloc "
                 "(MEMOPT_MALLOC=${MEMOPT_MALLOC}; install libmimalloc-dev "
                 "for faster compiles of large graphs)")
endif()

# Links the chosen allocator into executable `target`. The linker keeps the
# library even though nothing names its symbols (a toolchain defaulting to
# --as-needed would drop it), and it comes before libc in the search order,
# so its malloc and free are the process's.
function(memopt_link_malloc target)
  if(MEMOPT_USES_MIMALLOC)
    target_link_libraries(${target} PRIVATE
      "-Wl,--push-state,--no-as-needed" mimalloc "-Wl,--pop-state")
  endif()
endfunction()
