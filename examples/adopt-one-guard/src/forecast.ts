/** A stand-in for a slow weather API that allows few calls at once. */
export interface ForecastApi {
  forecast(city: string): Promise<string>;
  /** The most calls the API ever saw at once. */
  readonly peak: number;
}

export function slowForecastApi(delayMs = 50): ForecastApi {
  let running = 0;
  let peak = 0;
  return {
    async forecast(city) {
      running++;
      peak = Math.max(peak, running);
      await new Promise((resolve) => setTimeout(resolve, delayMs));
      running--;
      return `${city}: sunny, 21°C`;
    },
    get peak() {
      return peak;
    },
  };
}
