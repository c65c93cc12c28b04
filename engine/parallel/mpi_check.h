// MPI error codes as Status values: BS_MPI_CHECK(MPI_Allreduce(...)) returns
// from the enclosing function (returning Status or Result<T>) with a message
// naming the call, the source line, MPI's error text and the world rank.
//
// Contract: only meaningful on communicators whose error handler is
// MPI_ERRORS_RETURN (MpiCommunicator sets it); with MPI's default handler an
// error aborts the job before a code comes back.
#pragma once

#include <mpi.h>

#include "common/status.h"

namespace bubblescope::engine {

// "MPI_Allreduce failed on rank 3 (engine/parallel/x.cpp:42): <MPI's text>".
Status mpiError(int code, const char* call, const char* file, int line);

}  // namespace bubblescope::engine

#define BS_MPI_CHECK(call)                                                           \
  do {                                                                               \
    const int bs_mpi_rc_ = (call);                                                   \
    if (bs_mpi_rc_ != MPI_SUCCESS) {                                                 \
      return ::bubblescope::engine::mpiError(bs_mpi_rc_, #call, __FILE__, __LINE__); \
    }                                                                                \
  } while (0)
