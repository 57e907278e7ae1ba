// One way to run Trellis's services as processes, for the integration, fault and replica suites
// (test/) and the benchmarks (bench/): both import it from here (dist/bench cannot import test/).
export * from './scratch';
export * from './service-process';
export * from './trellis-processes';
export * from './wait-for';
export * from './dead-letters';
