// The suite's processes are started the way every other suite and the benchmarks start them.
export { TrellisProcesses, type Role } from '@trellis/testing/processes';
