// The part of `async-exit-hook` we call (the package ships no types).
declare module 'async-exit-hook' {
  const exitHook: { unhookEvent(event: string): void };
  export default exitHook;
}
