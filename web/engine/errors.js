// AttnplayError, the error every attnplay API raises for invalid input or a
// failure inside the C++ core, and unwrap(), which turns a binding's
// { error } result into one. Not here: how errors are shown to users.

/** Error raised for invalid input or a failure inside the C++ core. */
export class AttnplayError extends Error {
  constructor(message) {
    super(message);
    this.name = 'AttnplayError';
  }
}

/** A binding's result as it is, or an AttnplayError thrown when the core reported { error: message }. */
export function unwrap(result) {
  if (result && typeof result.error === 'string') throw new AttnplayError(result.error);
  return result;
}
