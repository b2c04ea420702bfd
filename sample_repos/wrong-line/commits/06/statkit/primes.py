"""Prime numbers for the checksum code."""


def is_prime(n):
    """True if n is a prime number; tries 2, then odd divisors only."""
    if n < 4:
        return n >= 2
    if n % 2 == 0:
        return False
    i = 3
    while i * i <= n:
        if n % i == 0:
            return False
        i += 2
    return True


def gcd(a, b):
    """Greatest common divisor (Euclid)."""
    while b:
        a, b = b, a % b
    return abs(a)


def lcm(a, b):
    """Least common multiple of two non-zero integers."""
    return abs(a * b) // gcd(a, b)


def primes_below(limit):
    """All primes p < limit, in increasing order (sieve of Eratosthenes)."""
    if limit < 3:
        return []
    sieve = bytearray([1]) * limit
    sieve[0] = sieve[1] = 0
    for n in range(2, int(limit**0.5) + 1):
        if sieve[n]:
            sieve[n * n :: n] = bytes(len(range(n * n, limit, n)))
    return [n for n in range(limit) if sieve[n]]


def factorize(n):
    """Prime factors of n >= 2 in increasing order, with repetition."""
    if n < 2:
        raise ValueError("factorize needs n >= 2")
    factors = []
    d = 2
    while d * d <= n:
        while n % d == 0:
            factors.append(d)
            n //= d
        d += 1
    if n > 1:
        factors.append(n)
    return factors


def is_coprime(a, b):
    """True if a and b share no prime factor."""
    return gcd(a, b) == 1


def totient(n):
    """Euler's phi: how many 1 <= k <= n are coprime to n."""
    result = n
    for p in set(factorize(n)) if n > 1 else ():
        result -= result // p
    return result


def next_prime(n):
    """Smallest prime strictly greater than n (n may be negative)."""
    candidate = max(n + 1, 2)
    while not is_prime(candidate):
        candidate += 1
    return candidate
